//! The MCP server end to end over stdio: handshake, tool lists per profile (and their size),
//! every tool's text against the matching CLI command, bad calls, freshness, EOF.

use crate::common;
use common::mcp::Client;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::process::Stdio;

/// The calc project, then a `feature` branch that changes `add`.
fn project(r: &TestRepo) {
    calc_project(r);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("src/calc.py", "def add(a, b):\n    \"\"\"Add two numbers, checking overflow.\"\"\"\n    return a + b\n\n\ndef total(xs):\n    s = 0\n    for x in xs:\n        s = add(s, x)\n    return s\n");
    r.commit_all("feature change");
}

/// Text with "last update Ns ago" made timeless.
fn timeless(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("last update ") {
            Some(i) => format!("{}last update …", &l[..i]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn cli_text(r: &TestRepo, args: &[&str]) -> String {
    let mut full = vec!["--no-dense"];
    full.extend_from_slice(args);
    r.text(&full)
}

#[test]
fn every_tool_answers_like_the_cli() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start(&r, &["--profile", "full"]);
    let list = c.request("tools/list", json!({}));
    let tools: Vec<String> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(tools.len(), 19, "{tools:?}");
    for t in list["result"]["tools"].as_array().unwrap() {
        let ro = t["annotations"]["readOnlyHint"].as_bool().unwrap();
        assert_eq!(
            ro,
            !matches!(t["name"].as_str().unwrap(), "feedback" | "export_graph" | "update_source_index"),
            "{t}"
        );
    }
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("search", json!({"query": "add numbers", "n_results": 3}), vec!["search", "add numbers", "-k", "3"]),
        (
            "deep_search",
            json!({"queries": ["zzqq nothing", "add numbers"], "n_results": 2}),
            vec!["deep-search", "zzqq nothing", "add numbers", "-k", "2"],
        ),
        ("find_definition", json!({"symbol": "total"}), vec!["find-definition", "total"]),
        ("find_usages", json!({"symbol": "add"}), vec!["find-usages", "add"]),
        ("find_tests_for", json!({"symbol": "add"}), vec!["find-tests-for", "add"]),
        (
            "find_similar",
            json!({"code": "def add(a, b): return a + b", "n_results": 2}),
            vec!["find-similar", "def add(a, b): return a + b", "-k", "2"],
        ),
        ("describe_symbol", json!({"symbol": "Square"}), vec!["describe-symbol", "Square"]),
        ("impact", json!({"symbol": "add"}), vec!["impact", "add"]),
        ("impact", json!({"changes": "main..feature"}), vec!["impact", "main..feature"]),
        ("module_summary", json!({"path": "src/calc.py"}), vec!["module-summary", "src/calc.py"]),
        ("repo_overview", json!({}), vec!["repo-overview"]),
        (
            "search_diff",
            json!({"query": "overflow", "base": "main"}),
            vec!["search-diff", "overflow", "--base", "main"],
        ),
        (
            "graph_query",
            json!({"operation": "callers", "symbol": "add"}),
            vec!["graph-query", "--op", "callers", "--symbol", "add"],
        ),
        ("graph_query", json!({"operation": "overview"}), vec!["graph", "query", "--op", "overview"]),
        ("graph_query", json!({"operation": "status", "rev": "main"}), vec!["graph", "status", "--rev", "main"]),
        ("list_sources", json!({}), vec!["list-sources"]),
        ("get_rag_status", json!({}), vec!["get-rag-status"]),
        (
            "search",
            json!({"query": "area", "rev": "main", "extensions": [".py"]}),
            vec!["search", "area", "--rev", "main", "--ext", ".py"],
        ),
        (
            "search",
            json!({"query": "add numbers", "n_results": 1, "explain": true, "language": "py"}),
            vec!["search", "add numbers", "-k", "1", "--explain", "--language", "py"],
        ),
        ("find_usages", json!({"symbol": "add", "n_results": 1}), vec!["find-usages", "add", "-k", "1"]),
        // One bound for `k` on every surface, said in the answer.
        ("search", json!({"query": "add", "n_results": 1500}), vec!["search", "add", "-k", "1500"]),
        (
            "deep_search",
            json!({"queries": ["add numbers"], "n_results": 1500}),
            vec!["deep-search", "add numbers", "-k", "1500"],
        ),
        (
            "find_similar",
            json!({"code": "def add(a, b): return a + b", "n_results": 1500}),
            vec!["find-similar", "def add(a, b): return a + b", "-k", "1500"],
        ),
        ("context", json!({"symbol": "total", "budget": 120}), vec!["context", "total", "--budget", "120"]),
        ("data_access", json!({}), vec!["data-access"]),
        ("impact", json!({"table": "orders"}), vec!["impact", "--table", "orders"]),
    ];
    let mut paged = 0;
    for (tool, args, cli) in &cases {
        let (text, is_error) = c.call(tool, args.clone());
        assert!(!is_error, "{tool}: {text}");
        // The store's age ticks between the two calls.
        let text = timeless(&text);
        // The one difference: the next page is the `cursor` argument, not the `--cursor` flag.
        let want = timeless(&cli_text(&r, cli)).replace("\nmore: --cursor ", "\nmore: cursor ");
        assert!(!text.contains("--cursor"), "{tool} {args}: {text}");
        paged += text.contains("\nmore: cursor ") as usize;
        assert_eq!(text, want, "{tool} {args} differs from git lynx {cli:?}");
    }
    assert!(paged > 0, "no case answered with a next page");
    for (tool, args) in [
        ("search", json!({"query": "add", "n_results": 1500})),
        ("deep_search", json!({"queries": ["add"], "n_results": 1500})),
        ("find_similar", json!({"code": "def add(a, b): return a + b", "n_results": 1500})),
        ("search_diff", json!({"query": "overflow", "base": "main", "n_results": 1500})),
    ] {
        let (text, _) = c.call(tool, args);
        assert!(text.contains("k = 1500 is more than a reading list; answered with the first 1000"), "{tool}: {text}");
    }
    // The CI gate is the same through MCP: the report format and the checks that tripped.
    let (text, err) =
        c.call("impact", json!({"changes": "main..feature", "format": "markdown", "fail_on": ["callers>0"]}));
    assert!(!err && text.contains("### Lynx impact report") && text.contains("**Checks failed:**"), "{text}");
    let out = r.lynx(&["--no-dense", "impact", "main..feature", "--format", "markdown", "--fail-on", "callers>0"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(timeless(&String::from_utf8_lossy(&out.stdout)), timeless(&text));
    // Tools with effects: answers and their effects.
    let (text, err) = c.call("export_graph", json!({"symbol": "add"}));
    assert!(!err && text.contains(".html"), "{text}");
    let (text, err) = c.call("update_source_index", json!({}));
    assert!(!err && text.contains("indexed"), "{text}");
    let (text, err) = c.call(
        "feedback",
        json!({"tool": "search", "query": "add", "outcome": "partial", "comment": "missed the test"}),
    );
    assert!(!err, "{text}");
    assert!(cli_text(&r, &["feedback"]).contains("search: partial 1"));
    // Bad calls are tool errors; the server stays up.
    let (text, err) = c.call("search", json!({"n_results": 2}));
    assert!(err && text.contains("query"), "{text}");
    let (text, err) = c.call("graph_query", json!({"operation": "nope", "symbol": "x"}));
    assert!(err && text.contains("unknown graph operation"), "{text}");
    let (text, err) = c.call("search", json!({"query": 42}));
    assert!(err && text.contains("must be a string"), "{text}");
    let v = c.request("tools/call", json!({"name": "no_such_tool", "arguments": {}}));
    assert!(v["error"].is_object(), "{v}");
    let (_, err) = c.call("search", json!({"query": "add"}));
    assert!(!err, "server still answers");
    // The guide resource reflects the live state.
    let g = c.request("resources/read", json!({"uri": "lynx://guide"}));
    let guide = g["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(guide.contains("Profile **full**") && guide.contains("deep_search"), "{guide}");
    assert!(c.close().success(), "clean exit on EOF");
}

/// LynxMCP 1.9's tools/list sizes, measured there: core 4,783, standard 10,704, full 15,279.
/// What a model reads of a tool is its name, description and input schema (the tool
/// definitions of the model APIs carry nothing else); the `outputSchema` is for the client, which
/// validates answers with it, and is bounded on its own.
#[test]
fn tool_lists_are_smaller_than_lynxmcp() {
    let r = TestRepo::new();
    project(&r);
    for (profile, limit, count) in [("core", 4783, 5), ("standard", 10704, 10), ("full", 15279, 19)] {
        let mut c = Client::start(&r, &["--profile", profile]);
        let v = c.request("tools/list", json!({}));
        let mut tools = v["result"]["tools"].as_array().unwrap().clone();
        assert_eq!(tools.len(), count, "{profile}");
        let mut outputs = 0;
        for t in &mut tools {
            let out = t.as_object_mut().unwrap().remove("outputSchema").unwrap();
            let n = serde_json::to_string(&out).unwrap().len();
            assert!(n < 8000, "{profile}: the outputSchema of {} is {n} characters", t["name"]);
            outputs += n;
        }
        let size = serde_json::to_string(&json!({"tools": tools})).unwrap().len();
        assert!(size < limit, "{profile}: tools/list is {size} characters, LynxMCP's is {limit}");
        eprintln!("{profile}: {size} characters (LynxMCP {limit}), output schemas {outputs}");
        c.close();
    }
    let out = r.cmd(&["serve", "--profile", "huge"]).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("possible values: core, standard, full"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The environment's profile is parsed by the same enum, with the same advice.
    let out = r.cmd(&["serve"]).env("LYNX_TOOL_PROFILE", "huge").stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown tool profile `huge`: use core, standard or full"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn edits_while_serving_are_reflected() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start(&r, &["--no-watch"]);
    let (text, _) = c.call("search", json!({"query": "quokkafunction"}));
    assert!(text.contains("no matches"), "{text}");
    r.write("src/new.py", "def quokkafunction():\n    return 'fresh'\n");
    let (text, _) = c.call("search", json!({"query": "quokkafunction"}));
    assert!(text.contains("src/new.py:1: quokkafunction (1-2, "), "{text}");
    assert!(text.starts_with("view: worktree"), "{text}");
    c.close();
}

/// A revision's listing is kept for the next question there; a name that moves (HEAD after a
/// commit) names the new commit's listing, never the kept one.
#[test]
fn a_moved_revision_name_is_answered_at_its_new_commit() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start(&r, &["--no-watch"]);
    let (text, _) = c.call("search", json!({"query": "wombatfunction", "rev": "HEAD"}));
    assert!(text.contains("no matches"), "{text}");
    let (again, _) = c.call("search", json!({"query": "add", "rev": "HEAD"}));
    assert!(again.contains("src/calc.py"), "{again}");
    r.write("src/new.py", "def wombatfunction():\n    return 'committed'\n");
    let new = r.commit_all("add wombat");
    let (text, _) = c.call("search", json!({"query": "wombatfunction", "rev": "HEAD"}));
    assert!(text.contains("src/new.py:1: wombatfunction (1-2, "), "{text}");
    assert!(text.starts_with(&format!("view: commit {}", &new[..12])), "{text}");
    // The commit before, asked by its id, is still the old listing.
    let (old, _) = c.call("search", json!({"query": "wombatfunction", "rev": "HEAD~1"}));
    assert!(old.contains("no matches"), "{old}");
    c.close();
}

#[test]
fn a_server_reuses_the_working_trees_listing_from_its_first_questions() {
    let r = TestRepo::new();
    project(&r);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let mut c = Client::spawn_logging(&r, &["--no-dense", "serve"], &log);
    // Back to back from the start, before any pause: the listing watcher is set before the
    // server answers, so these answers list the working tree at most once between them.
    for word in ["add", "subtract", "add", "multiply"] {
        let (text, is_error) = c.call("search", json!({"query": word}));
        assert!(!is_error, "{text}");
    }
    let edited = "def wombatfn():\n    return 1\n";
    r.write("src/w0.py", edited);
    let (text, _) = c.call("search", json!({"query": "wombatfn"}));
    assert!(text.contains("src/w0.py"), "a saved file is answered at once: {text}");
    c.close();
    let log = std::fs::read_to_string(&log).unwrap();
    let ready = log.find("index ready").unwrap_or_else(|| panic!("never ready:\n{log}"));
    let listed = log[ready..].lines().filter(|l| l.contains(" listed ") && l.contains(" files in ")).count();
    assert_eq!(listed, 0, "questions listed the working tree themselves instead of reusing the listing:\n{log}");
}

#[test]
fn edits_are_reflected_with_the_watcher_on() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start(&r, &[]);
    // Let the watcher start (the first answers may come before it does).
    let (text, _) = c.call("search", json!({"query": "add"}));
    assert!(text.contains("src/calc.py"), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    for (i, word) in ["wombatfn", "echidnafn", "dingofn"].iter().enumerate() {
        r.write(&format!("src/w{i}.py"), &format!("def {word}():\n    return {i}\n"));
        let (text, _) = c.call("search", json!({"query": word}));
        assert!(text.contains(&format!("src/w{i}.py")), "{word}: {text}");
    }
    r.remove("src/w0.py");
    let (text, _) = c.call("search", json!({"query": "wombatfn"}));
    assert!(!text.contains("src/w0.py"), "{text}");
    c.close();
}

impl Client {
    /// A tool call's whole result (text, error flag and structured content).
    fn call_full(&mut self, tool: &str, args: Value) -> Value {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(v["result"].is_object(), "{v}");
        v["result"].clone()
    }

    /// Writes a raw line and returns the next response that carries `id`.
    fn raw(&mut self, line: &[u8], id: Value) -> Value {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut l = String::new();
            assert!(self.stdout.read_line(&mut l).unwrap() > 0, "server closed stdout");
            let v: Value = serde_json::from_str(&l).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

/// Calls written the way LynxMCP's manual writes them keep LynxMCP's meaning.
#[test]
fn lynxmcp_calls_keep_their_meaning() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start(&r, &["--profile", "full"]);
    let ok = |v: &Value| {
        assert_ne!(v["isError"], true, "{v}");
        assert_eq!(v["structuredContent"]["ok"], true, "{v}");
        v["structuredContent"].clone()
    };
    // top_k is k; file_glob filters.
    let s = ok(&c.call_full("search", json!({"query": "add numbers", "top_k": 1})));
    assert_eq!(s["results"].as_array().unwrap().len(), 1, "{s}");
    let s = ok(&c.call_full("search", json!({"query": "add", "file_glob": "tests/**"})));
    let paths: Vec<&str> = s["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| p.starts_with("tests/")), "{paths:?}");
    // The structured content is what `--json` prints, but for the code the text shows (left
    // empty), ranking diagnostics, and scores to four decimals.
    let cli = r.json(&["--no-dense", "search", "add", "--glob", "tests/**"]);
    let at = |v: &Value| -> Vec<(String, u64)> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["path"].as_str().unwrap().to_string(), h["start_line"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(at(&s), at(&cli));
    for (m, c) in s["results"].as_array().unwrap().iter().zip(cli["results"].as_array().unwrap()) {
        assert!(!c["text"].as_str().unwrap().is_empty() && m["text"] == "", "{m} / {c}");
        assert!(c.get("sparse_rank").is_some() && m.get("sparse_rank").is_none(), "{m} / {c}");
        assert_eq!((&m["symbol"], &m["end_line"]), (&c["symbol"], &c["end_line"]));
        assert!((m["score"].as_f64().unwrap() - c["score"].as_f64().unwrap()).abs() < 1e-4);
    }
    // Graph: limit, relation_filter, file_or_symbol, shortest_path from `source` to `target`.
    let g = ok(&c.call_full("graph_query", json!({"operation": "callers", "symbol": "add"})));
    assert!(g["results"].as_array().unwrap().len() >= 2, "{g}");
    let g = ok(&c.call_full("graph_query", json!({"operation": "callers", "symbol": "add", "limit": 1})));
    assert_eq!(g["results"].as_array().unwrap().len(), 1, "{g}");
    let g = ok(&c.call_full(
        "graph_query",
        json!({"operation": "neighbors", "symbol": "Square", "relation_filter": "inherits"}),
    ));
    let rels: Vec<&str> = g["results"].as_array().unwrap().iter().map(|l| l["relation"].as_str().unwrap()).collect();
    assert!(
        !rels.is_empty() && rels.iter().all(|r| *r == "extends" || *r == "inherits" || *r == "extends_or_implements"),
        "{g}"
    );
    let g = ok(&c.call_full(
        "graph_query",
        json!({"operation": "shortest_path", "source": "total", "target": "add", "max_hops": 3}),
    ));
    assert_eq!(g["found"], true, "{g}");
    let g = ok(&c.call_full("graph_query", json!({"operation": "imports", "file_or_symbol": "tests/test_calc.py"})));
    assert_eq!(g["matched"], true, "{g}");
    let g =
        ok(&c.call_full("graph_query", json!({"operation": "overview", "top_n_gods": 1, "min_community_size": 1000})));
    assert!(g["hubs"].as_array().unwrap().len() <= 1 && g["communities"].as_array().unwrap().is_empty(), "{g}");
    // module_summary {file, limit}; find_tests_for {test_path_pattern}; deep_search {min_score}.
    let m = ok(&c.call_full("module_summary", json!({"file": "src/calc.py", "limit": 1})));
    assert_eq!(m["definitions"].as_array().unwrap().len(), 1, "{m}");
    let t = ok(&c.call_full("find_tests_for", json!({"symbol": "add", "test_path_pattern": "^tests/"})));
    assert!(!t["results"].as_array().unwrap().is_empty(), "{t}");
    let t = ok(&c.call_full("find_tests_for", json!({"symbol": "add", "test_path_pattern": "^spec/"})));
    assert!(t["results"].as_array().unwrap().is_empty(), "{t}");
    let d = ok(&c.call_full("deep_search", json!({"queries": ["add"], "top_k": 2, "min_score": 1e9})));
    assert_eq!(d["variants"][0]["strong"], false, "{d}");
    let d =
        ok(&c.call_full("deep_search", json!({"queries": ["add"], "top_k": 2, "min_score": 0.0, "min_results": 1})));
    assert_eq!(d["variants"][0]["strong"], true, "{d}");
    // export_graph {target, mode, out}: written inside the repository, never outside it.
    let e = ok(&c.call_full("export_graph", json!({"target": "add", "mode": "symbol", "out": "reports/add.html"})));
    assert!(r.file("reports/add.html").is_file(), "{e}");
    for bad in ["../outside.html", "/tmp/outside.html"] {
        let v = c.call_full("export_graph", json!({"target": "add", "out": bad}));
        assert_eq!(v["isError"], true, "{v}");
        assert!(v["content"][0]["text"].as_str().unwrap().contains("inside the repository"), "{v}");
    }
    // find_similar {snippet}: the argument is taken (the answer is about dense being off).
    let v = c.call_full("find_similar", json!({"snippet": "def add(a, b): return a + b", "top_k": 2}));
    assert!(!v["content"][0]["text"].as_str().unwrap().contains("unknown argument"), "{v}");
    // The CLI's names work too; a count on a tool that has none is not quietly dropped.
    let s = ok(&c.call_full("search", json!({"query": "add numbers", "k": 1})));
    assert_eq!(s["results"].as_array().unwrap().len(), 1, "{s}");
    let v = c.call_full("describe_symbol", json!({"symbol": "add", "top_k": 3}));
    assert_eq!(v["isError"], true, "{v}");
    // An argument no tool takes is an error naming what the tool takes.
    let v = c.call_full("search", json!({"query": "add", "topk": 3}));
    assert_eq!(v["isError"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("unknown argument `topk`") && text.contains("top_k") && text.contains("n_results"), "{text}");
    assert_eq!(v["structuredContent"]["ok"], false, "{v}");
    // Every tool declares the shape of its structured content.
    let tools = c.request("tools/list", json!({}));
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }
    c.close();
}

#[test]
fn json_rpc_errors_follow_the_spec() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start(&r, &[]);
    // The default profile says what it hides and how to get it.
    let instructions = c.init["result"]["instructions"].as_str().unwrap().to_string();
    assert!(
        instructions.contains("hides")
            && instructions.contains("find_similar")
            && instructions.contains("--profile full"),
        "{instructions}"
    );
    let v = c.raw(b"this is not json", Value::Null);
    assert_eq!(v["error"]["code"], -32700, "{v}");
    let v = c.raw(b"\xff\xfe{}", Value::Null);
    assert_eq!(v["error"]["code"], -32700, "{v}");
    let v = c.raw(br#"{"jsonrpc":"2.0","id":77,"method":"tools/call"}"#, json!(77));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("name"), "{v}");
    // The session goes on.
    let (text, err) = c.call("search", json!({"query": "add"}));
    assert!(!err && text.contains("src/calc.py"), "{text}");
    assert!(c.close().success());
}

/// A LynxMCP `config.json` written as its manual writes it (sources keyed by name) keeps its
/// folder sources, and names everything it cannot use.
#[test]
fn lynxmcp_config_in_the_manuals_format_keeps_its_sources() {
    let r = TestRepo::new();
    project(&r);
    r.write("manual/guide.md", "# Guide\n\nHow to configure the frobnicator.\n");
    r.write("manual/drafts/old.md", "# Old\n\nfrobnicator draft\n");
    let config = serde_json::json!({
        "config_version": 2,
        "embedding": {"model_name": "BAAI/bge-small-en-v1.5"},
        "sources": {
            "mydocs": {
                "type": "codebase",
                "path": r.file("manual").display().to_string(),
                "supported_extensions": [".md"],
                "ignored_path_fragments": ["drafts/"],
                "graph": {"enabled": false},
                "watcher": {"enabled": true}
            },
            "unityDoc": {"type": "webdoc", "url": "https://docs.unity3d.com/Manual/"}
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = r.cmd(&["--json", "list-sources"]).env("RAG_CONFIG_PATH", &path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "mydocs")
        .unwrap_or_else(|| panic!("{v}"))
        .clone();
    assert_eq!(
        (docs["kind"].as_str(), docs["graph"].as_bool(), docs["files"].as_u64()),
        (Some("folder"), Some(false), Some(1)),
        "{docs}"
    );
    let ignored: Vec<&str> =
        v["ignored_config_fields"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    for name in ["embedding", "sources[mydocs].watcher"] {
        assert!(ignored.iter().any(|i| i.starts_with(name)), "{name} not named in {ignored:?}");
    }
    // A webdoc source is read as one, and listing sources never crawls it.
    let web = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "unityDoc")
        .unwrap_or_else(|| panic!("{v}"))
        .clone();
    assert_eq!((web["kind"].as_str(), web["files"].as_u64()), (Some("webdoc"), Some(0)), "{web}");
    assert!(web["snapshot"].is_null(), "{web}");
    assert!(!ignored.iter().any(|i| i.starts_with("sources[unityDoc]")), "{ignored:?}");
}

/// `migrate-config --write` turns a LynxMCP config.json into Lynx settings that answer the same.
#[test]
fn migrate_config_round_trips() {
    let r = TestRepo::new();
    for i in 0..12 {
        r.write(&format!("src/m{i}.py"), &format!("def numbat_{i}():\n    return {i}\n"));
    }
    r.commit_all("first");
    let docs = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(docs.path().join("drafts")).unwrap();
    std::fs::write(docs.path().join("guide.md"), "# Guide\n\nNumbat care.\n").unwrap();
    std::fs::write(docs.path().join("drafts/old.md"), "# Old\n\nNumbat draft.\n").unwrap();
    std::fs::write(docs.path().join("notes.txt"), "numbat notes\n").unwrap();
    let config = serde_json::json!({
        "config_version": 2,
        "storage_path": "./rag_storage",
        "embedding": {"model_name": "BAAI/bge-small-en-v1.5"},
        "search": {"default_top_k": 8, "mode": "hybrid", "rrf_k": 60, "candidate_pool_size": 30, "deep": {"min_results": 3}},
        "tools": {"profile": "core", "include": ["graph_query"]},
        "sources": {"mydocs": {"type": "codebase", "path": docs.path().display().to_string(), "supported_extensions": [".md"], "ignored_path_fragments": ["/drafts/"], "watcher": {"debounce_seconds": 2.0}}}
    });
    let file = docs.path().join("config.json");
    std::fs::write(&file, config.to_string()).unwrap();
    let sources_of = |v: &Value| -> Vec<Value> {
        v["sources"].as_array().unwrap().iter().map(|s| json!([s["name"], s["kind"], s["graph"], s["files"]])).collect()
    };
    let out = r.cmd(&["--json", "list-sources"]).env("RAG_CONFIG_PATH", &file).output().unwrap();
    let read_directly: Value = serde_json::from_slice(&out.stdout).unwrap();
    let printed = r.json(&["migrate-config", file.to_str().unwrap()]);
    assert_eq!(printed["settings"]["search"]["k"], 8, "{printed}");
    assert!(
        printed["not_carried_over"].as_array().unwrap().iter().any(|s| s.as_str().unwrap().starts_with("storage_path")),
        "{printed}"
    );
    r.json(&["migrate-config", file.to_str().unwrap(), "--write"]);
    let migrated = r.json(&["list-sources"]);
    assert_eq!(sources_of(&migrated), sources_of(&read_directly));
    assert_eq!(sources_of(&migrated)[1], json!(["mydocs", "folder", true, 1]), "drafts and other extensions stay out");
    // The shared settings took effect: default_top_k 8, profile core plus graph_query.
    assert_eq!(r.json(&["--no-dense", "search", "numbat"])["results"].as_array().unwrap().len(), 8);
    let mut c = Client::start(&r, &[]);
    let names: Vec<String> = c.request("tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"graph_query".to_string()) && !names.contains(&"deep_search".to_string()), "{names:?}");
    c.close();
    // Migrating twice would add the same source again: refused, nothing written.
    let again = r.lynx(&["migrate-config", file.to_str().unwrap(), "--write"]);
    assert_eq!(again.status.code(), Some(2), "{}", String::from_utf8_lossy(&again.stderr));
}

/// Navigation without a `source` asks every source and answers from those that know the symbol.
#[test]
fn navigation_fans_out_over_sources() {
    let r = TestRepo::new();
    project(&r);
    let lib = tempfile::tempdir().unwrap();
    std::fs::write(
        lib.path().join("helpers.py"),
        "def numbat_helper(x):\n    return x\n\n\ndef uses_it():\n    return numbat_helper(1)\n",
    )
    .unwrap();
    r.json(&["source", "add", "lib", lib.path().to_str().unwrap()]);
    let mut c = Client::start(&r, &["--profile", "full"]);
    let v = c.call_full("find_definition", json!({"symbol": "numbat_helper"}));
    assert_ne!(v["isError"], true, "{v}");
    let parts = v["structuredContent"]["sources"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "only the source that has it answers: {v}");
    assert_eq!(parts[0]["source"], "lib");
    assert!(v["content"][0]["text"].as_str().unwrap().contains("helpers.py"), "{v}");
    // A symbol of the repository itself comes from the repository.
    let v = c.call_full("describe_symbol", json!({"symbol": "add"}));
    let parts = v["structuredContent"]["sources"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{v}");
    assert_ne!(parts[0]["source"], "lib", "{v}");
    // Named, one source answers as itself.
    let v = c.call_full("find_definition", json!({"symbol": "numbat_helper", "source": "lib"}));
    assert_eq!(v["structuredContent"]["matched"], true, "{v}");
    c.close();
    // The CLI asks the same way with --source (ALL: every source), rendered by the same code.
    let cli = r.json(&["--no-dense", "find-definition", "numbat_helper", "--source", "ALL"]);
    assert_eq!(cli["sources"][0]["source"], "lib", "{cli}");
    let cli = r.json(&["--no-dense", "find-definition", "numbat_helper", "--source", "lib"]);
    assert_eq!(cli["matched"], true, "{cli}");
    let plain = r.json(&["--no-dense", "find-definition", "numbat_helper"]);
    assert_eq!(plain["matched"], false, "without --source the CLI asks the repository: {plain}");
}

/// A missing model is explained in the first answer of a session, not in every one, while a
/// model turned off on purpose is named in each (briefly); the strength bars of deep_search are
/// settings.
#[test]
fn missing_model_is_explained_once_and_deep_bars_are_settings() {
    let r = TestRepo::new();
    project(&r);
    let mut c = Client::start_with_default_model(&r);
    let (first, _) = c.call("search", json!({"query": "add"}));
    let (second, _) = c.call("search", json!({"query": "total"}));
    let (third, _) = c.call("search", json!({"query": "report"}));
    assert!(first.contains("results are lexical only: ") && first.contains("potion-code"), "{first}");
    // One short line, without the advice or a retry timer.
    let note = first.lines().find(|l| l.contains("results are lexical only")).unwrap();
    assert!(note.len() < 260 && !note.contains("not trying again") && !note.contains("to work offline"), "{note}");
    for later in [&second, &third] {
        assert!(later.contains("results are lexical only (no model") && !later.contains("potion-code"), "{later}");
    }
    c.close();
    let mut c = Client::start(&r, &[]);
    for query in ["add", "total"] {
        let (text, _) = c.call("search", json!({"query": query}));
        assert!(text.contains("results are lexical only: turned off with --no-dense"), "{text}");
    }
    c.close();
    std::fs::write(r.file(".lynx/config.toml"), "[search]\ndeep_sparse_per_term = 0.5\n").unwrap();
    let d = r.json(&["--no-dense", "deep-search", "add", "--min-results", "1"]);
    assert_eq!(d["variants"][0]["strong"], true, "{d}");
    std::fs::write(r.file(".lynx/config.toml"), "[search]\ndeep_sparse_per_term = 1000.0\n").unwrap();
    let d = r.json(&["--no-dense", "deep-search", "add", "--min-results", "1"]);
    assert_eq!(d["variants"][0]["strong"], false, "{d}");
    assert!(d["variants"][0]["sparse_threshold"].as_f64().unwrap() >= 1000.0, "{d}");
}

/// Validates each (schema, instance) pair with Python's `jsonschema` (Draft 2020-12), after
/// closing every object schema that lists its properties: a field an answer carries and its
/// schema does not describe is an error. Returns one line per failure.
fn schema_failures(pairs: &[(String, Value, Value)]) -> Vec<String> {
    let script = r#"
import json, sys, jsonschema
def close(s):
    if isinstance(s, dict):
        if "properties" in s and "additionalProperties" not in s:
            s["additionalProperties"] = False
        for v in s.values():
            close(v)
    elif isinstance(s, list):
        for v in s:
            close(v)
out = []
for name, schema, instance in json.load(sys.stdin):
    jsonschema.Draft202012Validator.check_schema(schema)
    close(schema)
    for e in jsonschema.Draft202012Validator(schema).iter_errors(instance):
        out.append(f"{name}: {e.message[:300]} at {list(e.absolute_path)}")
        break
print(json.dumps(out))
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(serde_json::to_string(pairs).unwrap().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the validator failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every tool declares the shape of its answers: each answer of every kind (matched or not, one
/// source or several, a failure) is valid against the tool's `outputSchema`, which describes
/// every field it carries.
#[test]
fn every_answer_is_described_by_its_output_schema() {
    if !prerequisite("JSONSCHEMA", python_has("jsonschema"), "python3 -m pip install jsonschema") {
        return;
    }
    let r = TestRepo::new();
    project(&r);
    r.write("src/store.py", "def load_orders(db):\n    return db.execute(\"SELECT id, total FROM orders\")\n");
    r.commit_all("orders");
    let lib = tempfile::tempdir().unwrap();
    std::fs::write(lib.path().join("helpers.py"), "def numbat_helper(x):\n    return x\n").unwrap();
    r.json(&["source", "add", "lib", lib.path().to_str().unwrap()]);
    let mut c = Client::start(&r, &["--profile", "full"]);
    let list = c.request("tools/list", json!({}));
    let by_name = |key: &str| -> std::collections::HashMap<String, Value> {
        let tools = list["result"]["tools"].as_array().unwrap();
        tools.iter().map(|t| (t["name"].as_str().unwrap().to_string(), t[key].clone())).collect()
    };
    let (schemas, inputs) = (by_name("outputSchema"), by_name("inputSchema"));
    let calls: Vec<(&str, Value)> = vec![
        ("search", json!({"query": "add numbers", "n_results": 2, "explain": true})),
        ("search", json!({"query": "add numbers", "files": true, "source": "lib"})),
        ("search", json!({"query": "zzqqxx"})),
        ("search", json!({})),
        ("deep_search", json!({"queries": ["zzqq nothing", "add numbers"], "n_results": 2})),
        ("find_definition", json!({"symbol": "total"})),
        ("find_definition", json!({"symbol": "numbat_helper"})),
        ("find_definition", json!({"symbol": "nothing_like_it"})),
        ("find_definition", json!({"symbol": "total", "source": "lib"})),
        ("find_usages", json!({"symbol": "add", "n_results": 1})),
        ("find_tests_for", json!({"symbol": "add"})),
        ("find_similar", json!({"code": "def add(a, b): return a + b", "n_results": 2})),
        ("describe_symbol", json!({"symbol": "Square"})),
        ("impact", json!({"symbol": "add"})),
        ("impact", json!({"symbol": "nothing_like_it"})),
        ("impact", json!({"changes": "main..feature", "fail_on": ["callers>0"]})),
        ("impact", json!({"table": "orders"})),
        ("module_summary", json!({"path": "src/calc.py"})),
        ("module_summary", json!({"path": "no/such.py"})),
        ("repo_overview", json!({})),
        ("search_diff", json!({"query": "overflow", "base": "main"})),
        ("graph_query", json!({"operation": "callers", "symbol": "add"})),
        ("graph_query", json!({"operation": "callers", "symbol": "nothing_like_it"})),
        ("graph_query", json!({"operation": "shortest_path", "symbol": "Square.area", "target": "add"})),
        ("graph_query", json!({"operation": "shortest_path", "symbol": "add", "target": "nothing_like_it"})),
        ("graph_query", json!({"operation": "overview"})),
        ("graph_query", json!({"operation": "status"})),
        ("graph_query", json!({"operation": "surprising_connections"})),
        ("context", json!({"symbol": "total", "budget": 120})),
        ("context", json!({"symbol": "nothing_like_it"})),
        ("data_access", json!({})),
        ("data_access", json!({"name": "orders"})),
        ("export_graph", json!({"symbol": "add"})),
        ("export_graph", json!({"symbol": "nothing_like_it"})),
        ("list_sources", json!({})),
        ("get_rag_status", json!({})),
        ("update_source_index", json!({"source": "lib"})),
        ("feedback", json!({"tool": "search", "query": "add", "outcome": "partial"})),
    ];
    let mut pairs = Vec::new();
    let mut asked = Vec::new();
    let mut fanned = 0;
    for (tool, args) in &calls {
        // Each call is one its tool's inputSchema allows (but the one that leaves out `query`).
        if args.as_object().is_some_and(|a| !a.is_empty()) || *tool != "search" {
            asked.push((format!("{tool} {args}"), inputs[*tool].clone(), args.clone()));
        }
        let v = c.call_full(tool, args.clone());
        let content = v["structuredContent"].clone();
        assert!(content.is_object(), "{tool} {args}: {v}");
        fanned += content["sources"].is_array() as usize;
        pairs.push((format!("{tool} {args}"), schemas[*tool].clone(), content));
    }
    c.close();
    assert!(fanned > 0, "no call was answered by several sources");
    let used: std::collections::HashSet<&str> = calls.iter().map(|(t, _)| *t).collect();
    assert_eq!(used.len(), schemas.len(), "every tool is called");
    let failures = schema_failures(&pairs);
    assert!(failures.is_empty(), "answers outside their schema:\n{}", failures.join("\n"));
    let failures = schema_failures(&asked);
    assert!(failures.is_empty(), "calls outside their tool's inputSchema:\n{}", failures.join("\n"));
    // The schemas say something: a wrong type, a field they do not describe and a missing one
    // are each refused.
    let (name, schema, answer) = &pairs[0];
    let mut wrong = answer.clone();
    wrong["results"][0]["score"] = json!("high");
    let mut extra = answer.clone();
    extra["results"][0]["colour"] = json!("red");
    let mut missing = answer.clone();
    missing["results"][0].as_object_mut().unwrap().remove("path");
    let bad: Vec<(String, Value, Value)> = [wrong, extra, missing]
        .into_iter()
        .enumerate()
        .map(|(i, v)| (format!("{name} #{i}"), schema.clone(), v))
        .collect();
    assert_eq!(schema_failures(&bad).len(), 3, "each broken answer is refused");
}

#[test]
fn every_tool_is_a_command_of_the_same_name_and_arguments() {
    use clap::CommandFactory;
    let cli = lynx::cli::Cli::command();
    for tool in lynx_mcp::mcp::tools::TOOLS {
        let sub = tool.name.replace('_', "-");
        let Some(cmd) = cli.find_subcommand(&sub) else {
            panic!("the MCP tool `{}` has no `git lynx {sub}`", tool.name)
        };
        // What the command line takes under MCP's names (`n_results` is `-k`'s long name):
        // every MCP argument the command line has is the same argument there.
        let schema = (tool.schema)();
        let cli_args: Vec<String> = cmd.get_arguments().map(|a| a.get_id().as_str().replace('-', "_")).collect();
        let shared = schema["properties"].as_object().map_or(0, |p| p.keys().filter(|k| cli_args.contains(k)).count());
        assert!(
            shared > 0 || tool.name == "list_sources",
            "`{}`: no argument in common with `git lynx {sub}`",
            tool.name
        );
    }
}

/// A server reuses one search's buffers for the next: an answer never carries scores over from
/// the questions asked before it, at the same view or another one.
#[test]
fn answers_do_not_depend_on_the_questions_before_them() {
    let r = TestRepo::new();
    project(&r);
    let fresh = cli_text(&r, &["search", "add numbers overflow"]);
    let mut c = Client::start(&r, &["--no-watch"]);
    let (first, _) = c.call("search", json!({"query": "add numbers overflow"}));
    assert!(first.contains("src/calc.py"), "{first}");
    for (q, rev) in [("total of xs", None), ("numbers checking add", None), ("add", Some("HEAD~1"))] {
        let mut args = json!({"query": q});
        if let Some(rev) = rev {
            args["rev"] = json!(rev);
        }
        let (text, err) = c.call("search", args);
        assert!(!err, "{text}");
    }
    let (again, _) = c.call("search", json!({"query": "add numbers overflow"}));
    assert_eq!(again, first);
    assert_eq!(first.lines().skip(1).collect::<Vec<_>>(), fresh.lines().skip(1).collect::<Vec<_>>());
    c.close();
}

/// A range that touches 5,000 files, asked for as a summary: the text is a few lines and the
/// structured part stays within its budget instead of carrying every file and caller.
#[test]
fn a_summary_of_a_five_thousand_file_range_stays_small_in_both_parts() {
    let r = TestRepo::new();
    r.write("lib/core.py", "def shared(x):\n    return x\n");
    for i in 0..5000 {
        r.write(
            &format!("app/m{i:04}.py"),
            &format!("from lib.core import shared\n\n\ndef f{i}():\n    return shared({i})\n"),
        );
    }
    r.commit_all("base");
    r.write("lib/core.py", "def shared(x):\n    return x + 1\n");
    for i in 0..5000 {
        r.write(
            &format!("app/m{i:04}.py"),
            &format!("from lib.core import shared\n\n\ndef f{i}():\n    return shared({i} + 1)\n"),
        );
    }
    r.commit_all("change");
    r.json(&["--no-dense", "index", "--rev", "HEAD~1", "--rev", "HEAD"]);
    let mut c = Client::start(&r, &[]);
    let v = c.call_full("impact", json!({"changes": "HEAD~1..HEAD", "format": "summary"}));
    c.close();
    let text = v["content"][0]["text"].as_str().unwrap();
    let structured = serde_json::to_string(&v["structuredContent"]).unwrap();
    assert!(text.contains("5001") || text.contains("5,001") || text.contains("changed"), "{text}");
    assert!(text.len() < 2_000, "{} characters of text: {text}", text.len());
    let budget = (3 * text.len()).max(1_000);
    assert!(structured.len() <= budget, "{} characters structured for {} of text", structured.len(), text.len());
    // The CLI's --json stays whole; every list the structured part cut is named with its whole
    // length, so a program never takes the first items for all of them.
    let full = r.json(&["--no-dense", "impact", "HEAD~1..HEAD", "--format", "summary"]);
    assert!(serde_json::to_string(&full).unwrap().len() > 100_000);
    let cut = v["structuredContent"]["structured_cut"].as_object().expect("the cut lists are named");
    assert!(!cut.is_empty());
    for (pointer, whole) in cut {
        let shown = v["structuredContent"].pointer(pointer).expect(pointer);
        let len = shown.as_array().map(Vec::len).or(shown.as_object().map(|m| m.len())).unwrap();
        assert!((len as u64) < whole.as_u64().unwrap(), "{pointer}: {len} of {whole}");
        let all = full.pointer(pointer).expect(pointer);
        let all_len = all.as_array().map(Vec::len).or(all.as_object().map(|m| m.len())).unwrap();
        assert_eq!(all_len as u64, whole.as_u64().unwrap(), "{pointer}");
    }
}
