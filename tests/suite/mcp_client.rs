//! `serve` through rmcp's MCP client (not our own JSON-RPC lines), with calls written the way
//! LynxMCP's manual writes them: the client negotiates, lists tools with their schemas, and
//! every answer keeps LynxMCP's meaning and carries structured content.

use crate::common;
use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::os::fd::OwnedFd;
use std::process::Stdio;

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lynxmcp_calls_through_an_mcp_client() {
    let r = TestRepo::new();
    calc_project(&r);
    let mut child = r
        .cmd(&["--no-dense", "serve", "--profile", "full"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let to_server = tokio::fs::File::from_std(std::fs::File::from(OwnedFd::from(child.stdin.take().unwrap())));
    let from_server = tokio::fs::File::from_std(std::fs::File::from(OwnedFd::from(child.stdout.take().unwrap())));
    let client = ().serve((from_server, to_server)).await.expect("MCP handshake");
    assert_eq!(
        client.peer_info().and_then(|i| i.server_info.as_ref().map(|s| s.name.clone())).as_deref(),
        Some("git-lynx")
    );

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 19);
    assert!(tools.iter().all(|t| t.output_schema.is_some()), "every tool declares its output");

    let call = |name: &'static str, a: Value| {
        let client = &client;
        async move { client.call_tool(CallToolRequestParams::new(name).with_arguments(args(a))).await.unwrap() }
    };
    // search(query, top_k, file_glob), as in LynxMCP's manual.
    let res = call("search", json!({"query": "add numbers", "top_k": 1})).await;
    let s = res.structured_content.clone().expect("structured content");
    assert_eq!((s["ok"].as_bool(), s["results"].as_array().map(|a| a.len())), (Some(true), Some(1)), "{s}");
    let res = call("search", json!({"query": "add", "file_glob": "tests/**"})).await;
    let s = res.structured_content.clone().unwrap();
    assert!(s["results"].as_array().unwrap().iter().all(|h| h["path"].as_str().unwrap().starts_with("tests/")), "{s}");
    // graph_query(operation, symbol, limit) and shortest_path(source, target).
    let s = call("graph_query", json!({"operation": "callers", "symbol": "add", "limit": 1}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(s["results"].as_array().unwrap().len(), 1, "{s}");
    let s = call("graph_query", json!({"operation": "shortest_path", "source": "total", "target": "add"}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(s["found"], true, "{s}");
    // module_summary(file), find_tests_for(symbol, test_path_pattern).
    let s = call("module_summary", json!({"file": "src/calc.py", "limit": 1})).await.structured_content.unwrap();
    assert_eq!(s["definitions"].as_array().unwrap().len(), 1, "{s}");
    let s = call("find_tests_for", json!({"symbol": "add", "test_path_pattern": "^tests/"}))
        .await
        .structured_content
        .unwrap();
    assert!(!s["results"].as_array().unwrap().is_empty(), "{s}");
    // An unknown argument is an error result naming what the tool takes.
    let res = call("search", json!({"query": "add", "k_top": 3})).await;
    assert_eq!(res.is_error, Some(true));
    let text = res.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("unknown argument `k_top`") && text.contains("top_k"), "{text}");

    client.cancel().await.unwrap();
    let _ = child.wait();
}
