//! Reading an MCP tool's arguments: each tool's argument type (the operation's own, from
//! `ops`, shared with the command line and the web page) is
//! deserialized once, after `tools::normalize` has translated LynxMCP's names and refused
//! unknown ones, and is the tool's `inputSchema`. Counts take a number or a numeric string;
//! lists take one string or an array; null is the same as absent. An error names the argument
//! and what it must be.

use serde_json::Value;

use schemars::{JsonSchema, Schema};

/// A tool's `inputSchema`: its argument type's fields, each with its `#[schemars(description)]`.
pub fn schema<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut s = T::json_schema(&mut settings.into_generator());
    // The struct's own doc comment is for this code's readers; the tool's description says it.
    if let Some(o) = s.as_object_mut() {
        o.remove("description");
    }
    // What to send, briefly: an optional argument is simply left out (null is accepted too).
    // An empty description marks an argument whose name says enough (the command line's help
    // text, its doc comment, is not for the model).
    fn types_only(s: &mut Schema) {
        if let Some(o) = s.as_object_mut() {
            for k in ["title", "format", "minimum", "default"] {
                o.remove(k);
            }
            if o.get("description").is_some_and(|d| d == "") {
                o.remove("description");
            }
            if let Some(Value::Array(types)) = o.get("type")
                && let [one, null] = types.as_slice()
                && null == "null"
            {
                let one = one.clone();
                o.insert("type".into(), one);
            }
        }
        schemars::transform::transform_subschemas(&mut types_only, s);
    }
    types_only(&mut s);
    s.to_value()
}

pub use crate::ops::args::{parse, required};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    use crate::ops::args::Count;
    use crate::ops::graph::{GraphArgs, GraphOp};
    use crate::ops::search::SearchArgs;

    #[test]
    fn errors_name_the_argument() {
        let e = parse::<SearchArgs>(&map(json!({"n_results": 2}))).unwrap_err().to_string();
        assert_eq!(e, "missing required argument `query`");
        let e = parse::<SearchArgs>(&map(json!({"query": 42}))).unwrap_err().to_string();
        assert_eq!(e, "argument `query` must be a string, got integer `42`");
        let e = parse::<SearchArgs>(&map(json!({"query": "x", "n_results": 0}))).unwrap_err().to_string();
        assert!(e.contains("n_results") && e.contains("positive integer"), "{e}");
        let e = parse::<SearchArgs>(&map(json!({"query": "x", "files": "yes"}))).unwrap_err().to_string();
        assert!(e.contains("`files` must be true or false"), "{e}");
        let e = parse::<SearchArgs>(&map(json!({"query": "x", "mode": "fuzzy"}))).unwrap_err().to_string();
        assert!(e.contains("mode") && e.contains("fuzzy"), "{e}");
        let e = parse::<GraphArgs>(&map(json!({"operation": "nope"}))).unwrap_err().to_string();
        assert!(e.contains("unknown graph operation `nope`"), "{e}");
        let blank = parse::<SearchArgs>(&map(json!({"query": "  "}))).unwrap();
        assert_eq!(required(&blank.query, "query").unwrap_err().to_string(), "missing required argument `query`");
    }

    #[test]
    fn lenient_where_agents_are() {
        let s: SearchArgs = parse(&map(json!({"query": "x", "n_results": "500", "extensions": ".py", "language": ["python", "go"], "glob": "src/**", "rev": null, "files": null}))).unwrap();
        // A number in a string is a number; the bound is the search's own (with its note).
        assert_eq!(s.k, Some(Count(500)));
        let plain: SearchArgs = parse(&map(json!({"query": "x"}))).unwrap();
        assert_eq!((plain.k, plain.lines.per_hit), (None, crate::ops::search::SNIPPET_LINES), "the defaults");
        assert_eq!(s.files, None);
        let f = s.filters.filters().unwrap();
        assert_eq!(
            (f.extensions, f.languages, f.globs),
            (vec![".py".to_string()], vec!["python".to_string(), "go".to_string()], vec!["src/**".to_string()])
        );
        let d: crate::ops::deep_search::DeepArgs = parse(&map(json!({"queries": "one query"}))).unwrap();
        assert_eq!(d.variants, ["one query"]);
        let g: GraphArgs = parse(&map(json!({"operation": "Shortest_Path", "max_hops": 99}))).unwrap();
        assert_eq!((g.op, g.max_hops(), g.depth()), (Some(GraphOp::ShortestPath), 50, 1));
    }

    #[test]
    fn one_type_reads_the_command_line_and_an_mcp_call_alike() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cmd {
            #[command(flatten)]
            args: SearchArgs,
        }
        let cli = Cmd::try_parse_from(["search", "retry logic", "-k", "7", "--files", "--rev", "v1", "--glob", "*.rs"])
            .unwrap()
            .args;
        let mcp: SearchArgs =
            parse(&map(json!({"query": "retry logic", "n_results": 7, "files": true, "rev": "v1", "glob": "*.rs"})))
                .unwrap();
        let key = |a: &SearchArgs| format!("{:?}", (&a.query, a.k, a.files, &a.at.rev, &a.filters.globs, a.lines));
        assert_eq!(key(&cli), key(&mcp));
        // What only the command line has is not an MCP argument: refused by name, and never read.
        let e = super::super::tools::normalize("search", &map(json!({"query": "x", "lines": 3}))).unwrap_err();
        assert!(e.to_string().contains("unknown argument `lines`"), "{e}");
        let read: SearchArgs = parse(&map(json!({"query": "x", "lines": 3, "exact": true}))).unwrap();
        assert!(read.lines.per_hit == crate::ops::search::SNIPPET_LINES && !read.grep.exact);
    }
}
