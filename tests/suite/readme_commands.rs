//! README.md and the docs agree with the CLI: every `git lynx …` line of their shell blocks
//! parses and runs against a fixture repository, and every command written inline
//! (`git lynx doctor --path FILE`) names a command and options that exist.

use crate::common;
use clap::{CommandFactory, Parser};
use common::*;

fn docs() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("hooks/README.md"), root.join("ci/README.md")];
    let mut more: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    files.extend(more);
    files
        .into_iter()
        .map(|f| (f.strip_prefix(root).unwrap().display().to_string(), std::fs::read_to_string(&f).unwrap()))
        .collect()
}

/// `git lynx …` commands of shell code blocks (a line may chain several with `&&`), comments cut.
fn block_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let code = line.split(" #").next().unwrap_or("");
        for part in code.split("&&") {
            // A redirection is the shell's, not the command's.
            let part = part.split(" > ").next().unwrap_or("").trim();
            if let Some(rest) = part.strip_prefix("git lynx ") {
                out.push(rest.trim().to_string());
            }
        }
    }
    out
}

/// Inline spans: `git lynx …`.
fn inline_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, piece) in text.split('`').enumerate() {
        if i % 2 == 1
            && let Some(rest) = piece.strip_prefix("git lynx ")
        {
            out.push(rest.to_string());
        }
    }
    out
}

/// Shell words, with double and single quotes.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (_, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn inline_commands_name_real_commands_and_options() {
    let root = lynx::cli::Cli::command();
    let mut problems = Vec::new();
    let mut seen = 0;
    for (file, text) in docs() {
        for cmd in inline_commands(&text) {
            seen += 1;
            // Walk the subcommands, then check every `--option` named.
            let mut node = &root;
            let mut path = Vec::new();
            let ws = words(&cmd);
            for w in &ws {
                match node.find_subcommand(w) {
                    Some(sub) => {
                        node = sub;
                        path.push(w.clone());
                    }
                    None => break,
                }
            }
            if path.is_empty() {
                problems.push(format!("{file}: `git lynx {cmd}`: no such command"));
                continue;
            }
            for w in ws.iter().filter(|w| w.starts_with("--")) {
                let name = w.trim_start_matches("--").split(['=', ']']).next().unwrap();
                let known = node
                    .get_arguments()
                    .chain(root.get_arguments())
                    .any(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|x| x.contains(&name)));
                if !known {
                    problems.push(format!("{file}: `git lynx {cmd}`: `{path}` has no --{name}", path = path.join(" ")));
                }
            }
        }
    }
    assert!(seen > 20, "found the inline commands ({seen})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_shell_block_command_runs_against_a_fixture() {
    let r = TestRepo::new();
    calc_project(&r);
    // `push origin` / `fetch origin` need a remote.
    let remote = tempfile::tempdir().unwrap();
    let out = isolate(&mut std::process::Command::new("git"))
        .args(["init", "-q", "--bare"])
        .arg(remote.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    r.git(&["remote", "add", "origin", &remote.path().display().to_string()]);
    let mut ran = Vec::new();
    for (file, text) in docs() {
        for line in block_commands(&text) {
            // Placeholders of the examples, made real for the fixture.
            let line = line
                .replace("/path/to/repo", &r.path().display().to_string())
                .replace("docs/eval/gson.questions.json", "questions.json");
            let args = words(&line);
            let mut full = vec!["git-lynx".to_string()];
            full.extend(args.iter().cloned());
            if let Err(e) = lynx::cli::Cli::try_parse_from(&full)
                && !matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion)
            {
                panic!("{file}: `git lynx {line}` does not parse:\n{e}");
            }
            let out = r
                .cmd(&args.iter().map(String::as_str).collect::<Vec<_>>())
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{file}: `git lynx {line}` failed ({}):\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran.push(line);
        }
    }
    // The quick start, the client set-up, the hooks and the evaluation example at least.
    for expected in [
        "index",
        "search \"where are retries handled\"",
        "init --client claude",
        "serve",
        "hooks install",
        "evaluate mine",
    ] {
        assert!(ran.iter().any(|l| l.contains(expected)), "`{expected}` not among {ran:?}");
    }
}

/// The rows of CONFIG.md's `[section]` tables: (section, key, default as written).
fn config_rows(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = None;
    for line in text.lines() {
        if let Some(s) = line.strip_prefix("## `[").and_then(|r| r.split("]`").next()) {
            section = Some(s.to_string());
            continue;
        }
        if line.starts_with("## ") {
            section = None;
        }
        let Some(sec) = &section else { continue };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let keys: Vec<&str> = cells[1].split(',').map(|k| k.trim().trim_matches('`')).collect();
        let values: Vec<&str> = cells[2].split(", ").map(|v| v.trim().trim_matches('`')).collect();
        if keys.len() == values.len() {
            for (k, v) in keys.iter().zip(values) {
                out.push((sec.clone(), k.to_string(), v.to_string()));
            }
        }
    }
    out
}

fn written(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) if s.is_empty() => "\"\"".into(),
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(a) if a.is_empty() => "[]".into(),
        other => other.to_string(),
    }
}

#[test]
fn documented_defaults_and_counts_match_the_binary() {
    let defaults = toml::Value::try_from(lynx_core::config::Config::default()).unwrap();
    let docs: std::collections::HashMap<String, String> = docs().into_iter().collect();
    let mut checked = 0;
    for (section, key, value) in config_rows(&docs["docs/CONFIG.md"]) {
        let Some(actual) = defaults.get(&section).and_then(|s| s.get(&key)) else { continue };
        if value == "—" {
            continue;
        }
        let same = match (actual, value.parse::<f64>()) {
            (toml::Value::Float(f), Ok(v)) => (*f - v).abs() < 1e-6,
            (toml::Value::Integer(i), Ok(v)) => *i as f64 == v,
            _ => written(actual) == value,
        };
        assert!(same, "docs/CONFIG.md says [{section}] {key} defaults to `{value}`; the binary's default is {actual}");
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} defaults found in docs/CONFIG.md");
    // `key = number` in the README's TOML comments.
    let readme = &docs["README.md"];
    for comment in readme.lines().filter_map(|l| l.split_once("# ").map(|(_, c)| c)) {
        for part in comment.split([',', ';']) {
            let Some((k, v)) = part.split_once(" = ") else { continue };
            let (k, v) = (k.split_whitespace().last().unwrap_or(""), v.split_whitespace().next().unwrap_or(""));
            let Ok(n) = v.parse::<f64>() else { continue };
            let found =
                ["index", "search", "model", "watch"].iter().find_map(|s| defaults.get(*s).and_then(|t| t.get(k)));
            if let Some(actual) = found {
                let a = actual.as_float().or(actual.as_integer().map(|i| i as f64)).unwrap();
                assert!((a - n).abs() < 1e-6, "README.md says {k} = {v}; the binary's default is {actual}");
            }
        }
    }
    // Tool counts per profile, wherever the docs state them.
    use lynx_core::config::ToolProfile;
    let n = |p: ToolProfile| lynx_mcp::mcp::tools::tools_for(p, &[], &[], true).unwrap().len();
    let (core, standard, full) = (n(ToolProfile::Core), n(ToolProfile::Standard), n(ToolProfile::Full));
    let config = &docs["docs/CONFIG.md"];
    let want = format!("`core` ({core} tools), `standard` ({standard}) or `full` ({full})");
    assert!(config.contains(&want), "docs/CONFIG.md should say {want}");
    assert!(readme.contains(&format!("`full` (all {full})")), "README.md should say `full` (all {full})");
}
