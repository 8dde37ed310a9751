//! The MCP server end to end over stdio: handshake, tool lists per profile (and their size),
//! every tool's text against the matching CLI command, bad calls, freshness, EOF.

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(r: &TestRepo, extra: &[&str]) -> Client {
        let mut args = vec!["--no-dense", "serve"];
        args.extend_from_slice(extra);
        let mut child = r.cmd(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client { child, stdin, stdout, next: 1 };
        let init = c.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "git-lynx", "{init}");
        assert!(init["result"]["instructions"].as_str().unwrap().contains("search"));
        c.notify("notifications/initialized");
        c
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str) {
        self.send(json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request and reads until its response (responses may come out of order).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "server closed stdout");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON-RPC line ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let r = &v["result"];
        assert!(r.is_object(), "{v}");
        (r["content"][0]["text"].as_str().unwrap_or("").to_string(), r["isError"] == true)
    }

    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

fn project(r: &TestRepo) {
    r.write("src/calc.py", "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n    return a + b\n\n\ndef total(xs):\n    s = 0\n    for x in xs:\n        s = add(s, x)\n    return s\n");
    r.write("src/shapes.py", "class Shape:\n    def area(self):\n        return 0\n\n\nclass Square(Shape):\n    def area(self):\n        return total([1, 2])\n");
    r.write("tests/test_calc.py", "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n");
    r.write("README.md", "# Calc\n\nAdds numbers.\n");
    r.commit_all("first");
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
    let tools: Vec<String> = list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(tools.len(), 17, "{tools:?}");
    for t in list["result"]["tools"].as_array().unwrap() {
        let ro = t["annotations"]["readOnlyHint"].as_bool().unwrap();
        assert_eq!(ro, !matches!(t["name"].as_str().unwrap(), "feedback" | "export_graph" | "update_source_index"), "{t}");
    }
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("search", json!({"query": "add numbers", "n_results": 3}), vec!["search", "add numbers", "-k", "3"]),
        ("deep_search", json!({"queries": ["zzqq nothing", "add numbers"], "n_results": 2}), vec!["deep-search", "zzqq nothing", "add numbers", "-k", "2"]),
        ("find_definition", json!({"symbol": "total"}), vec!["find-definition", "total"]),
        ("find_usages", json!({"symbol": "add"}), vec!["find-usages", "add"]),
        ("find_tests_for", json!({"symbol": "add"}), vec!["find-tests-for", "add"]),
        ("find_similar", json!({"code": "def add(a, b): return a + b", "n_results": 2}), vec!["find-similar", "def add(a, b): return a + b", "-k", "2"]),
        ("describe_symbol", json!({"symbol": "Square"}), vec!["describe-symbol", "Square"]),
        ("impact", json!({"symbol": "add"}), vec!["impact", "add"]),
        ("impact", json!({"changes": "main..feature"}), vec!["impact", "main..feature"]),
        ("module_summary", json!({"path": "src/calc.py"}), vec!["module-summary", "src/calc.py"]),
        ("repo_overview", json!({}), vec!["repo-overview"]),
        ("search_diff", json!({"query": "overflow", "base": "main"}), vec!["search-diff", "overflow", "--base", "main"]),
        ("graph_query", json!({"operation": "callers", "symbol": "add"}), vec!["graph-query", "--op", "callers", "--symbol", "add"]),
        ("graph_query", json!({"operation": "overview"}), vec!["graph", "query", "--op", "overview"]),
        ("graph_query", json!({"operation": "status", "rev": "main"}), vec!["graph", "status", "--rev", "main"]),
        ("list_sources", json!({}), vec!["list-sources"]),
        ("get_rag_status", json!({}), vec!["get-rag-status"]),
        ("search", json!({"query": "area", "rev": "main", "extensions": [".py"]}), vec!["search", "area", "--rev", "main", "--ext", ".py"]),
    ];
    for (tool, args, cli) in &cases {
        let (text, is_error) = c.call(tool, args.clone());
        assert!(!is_error, "{tool}: {text}");
        // The store's age ticks between the two calls.
        let text = timeless(&text);
        assert_eq!(text, timeless(&cli_text(&r, cli)), "{tool} {args} differs from git lynx {cli:?}");
    }
    // Tools with effects: answers and their effects.
    let (text, err) = c.call("export_graph", json!({"symbol": "add"}));
    assert!(!err && text.contains(".html"), "{text}");
    let (text, err) = c.call("update_source_index", json!({}));
    assert!(!err && text.contains("indexed"), "{text}");
    let (text, err) = c.call("feedback", json!({"tool": "search", "query": "add", "outcome": "partial", "comment": "missed the test"}));
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
#[test]
fn tool_lists_are_smaller_than_lynxmcp() {
    let r = TestRepo::new();
    project(&r);
    for (profile, limit, count) in [("core", 4783, 5), ("standard", 10704, 10), ("full", 15279, 17)] {
        let mut c = Client::start(&r, &["--profile", profile]);
        let v = c.request("tools/list", json!({}));
        let size = serde_json::to_string(&v["result"]).unwrap().len();
        assert!(size < limit, "{profile}: tools/list is {size} characters, LynxMCP's is {limit}");
        assert_eq!(v["result"]["tools"].as_array().unwrap().len(), count, "{profile}");
        eprintln!("{profile}: {size} characters (LynxMCP {limit})");
        c.close();
    }
    let out = r.cmd(&["serve", "--profile", "huge"]).stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown tool profile"));
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
    assert!(text.contains("src/new.py:1-2 quokkafunction"), "{text}");
    assert!(text.starts_with("view: worktree"), "{text}");
    c.close();
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
