//! Client setup: `init` writes a portable client configuration and rules, a real client start
//! from that configuration answers, and `remove` leaves the repository as it was.

use crate::common;
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

/// Codex reads one per-user TOML file: `init` adds `[mcp_servers.lynx]` there, keeping every
/// other table, comment and blank line, and `remove` gives the file back byte for byte.
#[test]
fn codex_entry_goes_in_its_config_toml_and_out_again() {
    let r = TestRepo::new();
    r.write("src/quokka.py", "def quokka_smile():\n    return 5\n");
    r.commit_all("first");
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let theirs = "# my Codex settings\nmodel = \"o3\"   # the default\n\n[mcp_servers.other]\ncommand = \"x\"\nargs = [ \"--flag\" ]  # keep me\n\n[profiles.fast]\nmodel = 'mini'\n\n# the end\n";
    std::fs::write(&file, theirs).unwrap();
    let run = |codex_home: Option<&Path>, args: &[&str]| {
        let mut c = r.cmd(args);
        c.env("HOME", home.path()).env_remove("CODEX_HOME");
        if let Some(h) = codex_home {
            c.env("CODEX_HOME", h);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let v = run(None, &["--json", "init", "--client", "codex", "--no-index"]);
    assert!(v["written"].as_array().unwrap().iter().any(|w| w.as_str() == Some(&*file.display().to_string())), "{v}");
    assert!(r.file("AGENTS.md").is_file());
    let text = std::fs::read_to_string(&file).unwrap();
    // Every line of theirs is still there, in its order (the entry goes beside `other`).
    let mut lines = text.lines();
    assert!(theirs.lines().all(|l| lines.any(|t| t == l)), "the rest is kept as it was:\n{text}");
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    let servers = parsed["mcp_servers"].as_table().unwrap();
    assert_eq!(servers["other"]["command"].as_str(), Some("x"), "{text}");
    let lynx = &servers["lynx"];
    assert_eq!(lynx["args"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect::<Vec<_>>(), ["serve"]);
    // Codex starts the server in the project it runs in.
    let entry = json!({"command": lynx["command"].as_str().unwrap(), "args": ["serve"]});
    assert!(start_like_a_client(&entry, r.path(), r.path(), "quokka smile").contains("src/quokka.py"));
    // Running init again replaces the entry, not adds a second.
    run(None, &["--json", "init", "--client", "codex", "--no-index"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let v = run(None, &["--json", "remove"]);
    assert!(v["removed"].to_string().contains("config.toml"), "{v}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs, "byte for byte");

    // CODEX_HOME moves the file; one Lynx made is removed whole.
    let codex_home = tempfile::tempdir().unwrap();
    run(Some(codex_home.path()), &["--json", "init", "--client", "codex", "--no-index"]);
    let made = std::fs::read_to_string(codex_home.path().join("config.toml")).unwrap();
    assert!(made.starts_with("[mcp_servers.lynx]\n"), "no empty [mcp_servers] header: {made}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs, "~/.codex untouched");
    run(Some(codex_home.path()), &["--json", "remove"]);
    assert!(!codex_home.path().join("config.toml").exists());
    // A file without a final newline gets one (TOML writers end every line), and nothing else.
    let bare = "model = \"o3\"\n[mcp_servers.other]\ncommand = \"x\"";
    std::fs::write(&file, bare).unwrap();
    run(None, &["--json", "init", "--client", "codex", "--no-index"]);
    run(None, &["--json", "remove"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), format!("{bare}\n"));
}
