//! README.md and the docs agree with the CLI: every `git lynx …` line of their shell blocks
//! parses and runs against a fixture repository, and every command written inline
//! (`git lynx doctor --path FILE`) names a command and options that exist.

mod common;
use clap::{CommandFactory, Parser};
use common::*;

fn docs() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("hooks/README.md"), root.join("ci/README.md")];
    let mut more: Vec<_> = std::fs::read_dir(root.join("docs")).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
    more.sort();
    files.extend(more);
    files.into_iter().map(|f| (f.strip_prefix(root).unwrap().display().to_string(), std::fs::read_to_string(&f).unwrap())).collect()
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
        if i % 2 == 1 {
            if let Some(rest) = piece.strip_prefix("git lynx ") {
                out.push(rest.to_string());
            }
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
                let known = node.get_arguments().chain(root.get_arguments()).any(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|x| x.contains(&name)));
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
    let out = isolate(&mut std::process::Command::new("git")).args(["init", "-q", "--bare"]).arg(remote.path()).output().unwrap();
    assert!(out.status.success());
    r.git(&["remote", "add", "origin", &remote.path().display().to_string()]);
    let mut ran = Vec::new();
    for (file, text) in docs() {
        for line in block_commands(&text) {
            // Placeholders of the examples, made real for the fixture.
            let line = line.replace("/path/to/repo", &r.path().display().to_string()).replace("docs/eval/gson.questions.json", "questions.json");
            let args = words(&line);
            let mut full = vec!["git-lynx".to_string()];
            full.extend(args.iter().cloned());
            if let Err(e) = lynx::cli::Cli::try_parse_from(&full) {
                if !matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) {
                    panic!("{file}: `git lynx {line}` does not parse:\n{e}");
                }
            }
            let out = r.cmd(&args.iter().map(String::as_str).collect::<Vec<_>>()).stdin(std::process::Stdio::null()).output().unwrap();
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
    for expected in ["index", "search \"where are retries handled\"", "init --client claude", "serve", "hooks install", "evaluate mine"] {
        assert!(ran.iter().any(|l| l.contains(expected)), "`{expected}` not among {ran:?}");
    }
}
