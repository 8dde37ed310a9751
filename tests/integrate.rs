//! Client setup: `init` writes a portable client configuration and rules, a real client start
//! from that configuration answers, and `remove` leaves the repository as it was.

mod common;
use common::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// Every file of the checkout but `.git` and the store, with its content.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".lynx" {
                continue;
            }
            if p.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Starts the server exactly as the client configuration says, in `cwd`, with `workspace` for
/// the client's workspace variable, and asks one search.
fn start_like_a_client(entry: &Value, cwd: &Path, workspace: &Path, query: &str) -> String {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().replace("${workspaceFolder}", &workspace.display().to_string()))
        .collect();
    let mut cmd = Command::new(entry["command"].as_str().unwrap());
    cmd.args(["--no-dense"]).args(&args).current_dir(cwd).env("PATH", path);
    isolate(&mut cmd);
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": query}}}),
    );
    let text = loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v["result"]["content"][0]["text"].as_str().unwrap_or("").to_string();
        }
    };
    drop(stdin);
    child.wait().unwrap();
    text
}

#[test]
fn init_then_a_client_then_remove_leaves_the_repository_as_it_was() {
    let r = TestRepo::new();
    r.write("src/wombat.py", "def wombat_burrow():\n    return 1\n");
    r.write("CLAUDE.md", "# Team notes\n\nUse tabs.\n");
    r.write(
        ".mcp.json",
        "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-server\"\n    }\n  }\n}\n",
    );
    r.commit_all("first");
    let before = snapshot(r.path());

    let v = r.json(&["init", "--client", "claude", "--yes"]);
    assert_eq!(v["client"], "claude");
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(r.file(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["other"]["command"], "other-server", "{mcp}");
    let entry = &mcp["mcpServers"]["lynx"];
    // Portable: nothing names this machine's paths.
    assert_eq!(entry["args"], json!(["serve"]), "{entry}");
    assert!(!entry.to_string().contains(&r.path().display().to_string()), "{entry}");
    let claude = std::fs::read_to_string(r.file("CLAUDE.md")).unwrap();
    assert!(
        claude.starts_with("# Team notes") && claude.contains("lynx:begin") && claude.contains("`search`"),
        "{claude}"
    );
    assert!(
        v["index"]["files"].as_u64().unwrap_or(0) >= 1 || v["index"]["blobs_new"].as_u64().unwrap_or(0) >= 1,
        "{v}"
    );

    // The client starts the server from its configuration, in the project.
    let text = start_like_a_client(entry, r.path(), r.path(), "wombat burrow");
    assert!(text.contains("src/wombat.py"), "{text}");

    let v = r.json(&["remove"]);
    assert_eq!(v["removed"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(snapshot(r.path()), before, "remove left the repository different");
    assert!(r.file(".lynx").is_dir(), "the index stays unless asked");
    r.json(&["remove", "--store"]);
    assert!(!r.file(".lynx").exists());
}

#[test]
fn cursor_gets_its_own_files_and_they_go_again() {
    let r = TestRepo::new();
    r.write("src/quokka.py", "def quokka_smile():\n    return 2\n");
    r.commit_all("first");
    let before = snapshot(r.path());
    r.json(&["init", "--client", "cursor", "--no-index"]);
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(r.file(".cursor/mcp.json")).unwrap()).unwrap();
    let entry = &mcp["mcpServers"]["lynx"];
    assert_eq!(entry["args"], json!(["-C", "${workspaceFolder}", "serve"]), "{entry}");
    let rules = std::fs::read_to_string(r.file(".cursor/rules/lynx.mdc")).unwrap();
    assert!(rules.starts_with("---\n") && rules.contains("alwaysApply: true"), "{rules}");
    // What `mcp-config cursor` prints is that file, valid as printed.
    let printed = r.lynx(&["mcp-config", "cursor"]);
    let printed: Value = serde_json::from_slice(&printed.stdout).expect("mcp-config cursor prints valid JSON");
    assert_eq!(printed, mcp);
    // Started the way Cursor starts it (elsewhere, with the workspace folder).
    let elsewhere = tempfile::tempdir().unwrap();
    let text = start_like_a_client(entry, elsewhere.path(), r.path(), "quokka smile");
    assert!(text.contains("src/quokka.py"), "{text}");
    r.json(&["remove"]);
    assert_eq!(snapshot(r.path()), before);
    let v = r.json(&["remove"]);
    assert_eq!(v["removed"], json!([]), "a second remove finds nothing: {v}");
}

/// Antigravity has only a per-user file: `init` adds this repository's entry beside the
/// others there, and `remove` takes exactly that entry out.
#[test]
fn antigravity_entry_goes_in_the_user_file_and_out_again() {
    let r = TestRepo::new();
    r.write("src/bilby.py", "def bilby_den():\n    return 3\n");
    r.commit_all("first");
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/antigravity/mcp_config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let theirs = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}\n";
    std::fs::write(&file, theirs).unwrap();
    let run = |args: &[&str]| {
        let out = r.cmd(args).env("HOME", home.path()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    run(&["--json", "init", "--client", "antigravity", "--no-index"]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let servers = v["mcpServers"].as_object().unwrap();
    assert!(servers.contains_key("other"), "{v}");
    let (name, entry) = servers.iter().find(|(k, _)| k.starts_with("lynx-")).unwrap_or_else(|| panic!("{v}"));
    assert_eq!(entry["type"], "stdio");
    assert_eq!(entry["args"][1].as_str().map(Path::new), Some(r.path()), "{entry}");
    let printed = run(&["--json", "mcp-config", "antigravity"]);
    assert!(printed["args"][1].as_str().is_some_and(|p| Path::new(p) == r.path()), "{printed}");
    let text = start_like_a_client(entry, home.path(), r.path(), "bilby den");
    assert!(text.contains("src/bilby.py"), "{name}: {text}");
    run(&["--json", "remove"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
}
