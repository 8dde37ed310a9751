//! The command line follows git's and ripgrep's conventions: colour, paths relative to where
//! it runs, `path:line:`, pathspecs, `-l`, exact and regex search with context, JSON Lines,
//! git's environment, `--json` on usage errors, version, manual and completions — and every
//! command line the README and the docs show runs.

use crate::common;
use common::*;
use serde_json::Value;
use std::process::Command;

fn lynx_in(r: &TestRepo, dir: &str, args: &[&str]) -> std::process::Output {
    let mut c = r.cmd(args);
    c.current_dir(r.file(dir));
    c.output().unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn colour_follows_color_and_no_color() {
    let r = TestRepo::new();
    calc_project(&r);
    // Not a terminal: no colour unless asked.
    let plain = r.text(&["find-usages", "add"]);
    assert!(!plain.contains('\x1b'), "{plain}");
    let always = r.text(&["--color", "always", "find-usages", "add"]);
    assert!(always.contains("\x1b[35msrc/calc.py\x1b[0m:\x1b[32m9\x1b[0m:"), "{always}");
    let never = r.cmd(&["--color", "never", "find-usages", "add"]).env("NO_COLOR", "").output().unwrap();
    assert!(!stdout(&never).contains('\x1b'));
    // Logs on a non-terminal stderr carry no escape codes.
    r.write("lynx.toml", "[search]\nmode = \"sparse\"\n[model]\nname = \"../outside\"\n");
    let out = r.lynx(&["search", "add"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model.name") && !err.contains('\x1b'), "{err}");
    assert!(r.lynx(&["--color", "sometimes", "status"]).status.code() == Some(2));
}

#[test]
fn paths_are_relative_to_the_current_directory_in_text_and_to_the_root_in_json() {
    let r = TestRepo::new();
    calc_project(&r);
    let out = lynx_in(&r, "src", &["find-usages", "add"]);
    let text = stdout(&out);
    assert!(text.contains("\ncalc.py:9: total (6-10) [calls]\n"), "{text}");
    assert!(text.contains("\n../tests/test_calc.py:5: test_add (4-5)"), "{text}");
    let out = lynx_in(&r, "src", &["--json", "find-usages", "add"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = v["results"].as_array().unwrap().iter().map(|u| u["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"src/calc.py") && paths.contains(&"tests/test_calc.py"), "{v}");
    // Search hits start with `path:line:` too.
    let text = stdout(&lynx_in(&r, "src", &["search", "total", "-k", "1", "--lines", "0"]));
    assert!(text.lines().any(|l| l.starts_with("calc.py:6: total (6-10, ")), "{text}");
}

#[test]
fn pathspecs_after_double_dash_and_negated_globs() {
    let r = TestRepo::new();
    calc_project(&r);
    let files = |v: &Value| -> Vec<String> {
        let mut f: Vec<String> =
            v["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect();
        f.sort();
        f.dedup();
        f
    };
    let all = files(&r.json(&["search", "add", "--mode", "sparse"]));
    assert!(all.contains(&"tests/test_calc.py".to_string()) && all.contains(&"src/calc.py".to_string()), "{all:?}");
    assert_eq!(files(&r.json(&["search", "add", "--mode", "sparse", "--", "src/calc.py"])), ["src/calc.py"]);
    let no_tests = files(&r.json(&["search", "add", "--mode", "sparse", "--", ":(exclude)tests"]));
    assert!(!no_tests.iter().any(|p| p.starts_with("tests/")) && !no_tests.is_empty(), "{no_tests:?}");
    assert_eq!(
        files(&r.json(&["search", "add", "--mode", "sparse", "--", ":!tests", ":!README.md", ":!src/shapes.py"])),
        ["src/calc.py"]
    );
    let globbed = files(&r.json(&["search", "add", "--mode", "sparse", "--glob", "!tests/**"]));
    assert!(!globbed.is_empty() && !globbed.iter().any(|p| p.starts_with("tests/")), "{globbed:?}");
    // From a subdirectory, pathspecs are relative to it (as in git).
    let out = lynx_in(&r, "tests", &["--json", "search", "add", "--mode", "sparse", "--", "."]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(files(&v), ["tests/test_calc.py"]);
    let out = lynx_in(&r, "tests", &["--json", "search", "add", "--", "../../elsewhere"]);
    assert_eq!(out.status.code(), Some(2), "a pathspec outside the repository is a usage error");
    assert!(stdout(&out).contains("outside the repository"));
}

#[test]
fn exact_and_regex_search_at_any_revision_with_context_and_files_with_matches() {
    let r = TestRepo::new();
    calc_project(&r);
    r.write("src/secret.py", "TOKEN = 'platypusSecretToken'\nOTHER = 'platypus'\n");
    let first = r.commit_all("secret");
    r.write("src/secret.py", "TOKEN = 'rotated'\n");
    r.commit_all("rotate");
    // The ranked search finds partial matches; --exact finds only the string.
    let now = r.json(&["search", "--exact", "platypusSecretToken"]);
    assert_eq!(now["matches"].as_array().unwrap().len(), 0, "{now}");
    let then = r.json(&["search", "--exact", "platypusSecretToken", "--rev", &first]);
    let m = &then["matches"][0];
    assert_eq!(
        (m["path"].as_str(), m["line"].as_u64(), m["column"].as_u64()),
        (Some("src/secret.py"), Some(1), Some(10)),
        "{then}"
    );
    assert_eq!(then["mode"], "exact");
    // Text: the summary first (as in a ranked search), then `path:line:text`.
    let text = r.text(&["search", "--exact", "platypusSecretToken", "--rev", &first]);
    assert_eq!(text.lines().nth(1), Some("src/secret.py:1:TOKEN = 'platypusSecretToken'"), "{text}");
    // Regex, ignore case, context lines.
    let text = r.text(&["search", "--regex", "^def (add|total)", "-A", "1"]);
    assert_eq!(
        text.lines().skip(1).take(5).collect::<Vec<_>>(),
        [
            "src/calc.py:1:def add(a, b):",
            "src/calc.py-2-    \"\"\"Add two numbers.\"\"\"",
            "--",
            "src/calc.py:6:def total(xs):",
            "src/calc.py-7-    s = 0"
        ],
        "{text}"
    );
    let v = r.json(&["search", "--exact", "DEF ADD", "-i"]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 1, "{v}");
    // -l: files only, for exact and ranked search alike.
    let text = r.text(&["search", "--exact", "add", "-l"]);
    assert_eq!(text.lines().collect::<Vec<_>>(), ["src/calc.py", "tests/test_calc.py"], "{text}");
    let text = r.text(&["search", "add", "-l"]);
    assert!(text.lines().all(|l| !l.contains(' ')) && text.lines().next() == Some("src/calc.py"), "{text}");
    // Filters apply, a bad regex is a usage error, context needs --exact/--regex.
    let v = r.json(&["search", "--exact", "add", "--", "tests"]);
    assert!(v["matches"].as_array().unwrap().iter().all(|m| m["path"] == "tests/test_calc.py"), "{v}");
    assert_eq!(r.lynx(&["search", "--regex", "a("]).status.code(), Some(2));
    assert_eq!(r.lynx(&["search", "add", "-A", "2"]).status.code(), Some(2));
}

#[test]
fn json_lines_stream_one_object_per_result_then_a_summary() {
    let r = TestRepo::new();
    calc_project(&r);
    let out = r.lynx(&["--jsonl", "search", "--exact", "add"]);
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() >= 3, "{lines:?}");
    let (last, items) = lines.split_last().unwrap();
    assert!(items.iter().all(|l| l["type"] == "result" && l["path"].is_string() && l["line"].is_u64()));
    assert_eq!(last["type"], "summary");
    assert_eq!(last["list"], "matches");
    assert!(last.get("matches").is_none());
    let out = r.lynx(&["--jsonl", "find-usages", "add"]);
    let first: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!((first["type"].as_str(), first["operation"].as_str()), (Some("result"), Some("find_usages")));
}

#[test]
fn git_environment_chooses_the_repository() {
    let r = TestRepo::new();
    calc_project(&r);
    let elsewhere = tempfile::tempdir().unwrap();
    let out = isolate(&mut Command::new(BIN))
        .args(["--json", "find-definition", "total"])
        .current_dir(elsewhere.path())
        .env("GIT_DIR", r.file(".git"))
        .env("GIT_WORK_TREE", r.path())
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["results"][0]["path"], "src/calc.py", "{v}");
    // `git --git-dir=… --work-tree=… lynx` runs git-lynx with those variables set.
    let bin_dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(BIN, bin_dir.path().join("git-lynx")).unwrap();
    let path = format!("{}:{}", bin_dir.path().display(), std::env::var("PATH").unwrap());
    let git_dir = format!("--git-dir={}", r.file(".git").display());
    let work_tree = format!("--work-tree={}", r.path().display());
    let out = isolate(&mut Command::new("git"))
        .args([git_dir.as_str(), work_tree.as_str(), "lynx", "--json", "find-definition", "total"])
        .current_dir(elsewhere.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["results"][0]["path"], "src/calc.py", "{v}");
    // GIT_DIR pointing nowhere is a clear usage error, not a search of the current directory.
    let out = isolate(&mut Command::new(BIN))
        .args(["status"])
        .current_dir(r.path())
        .env("GIT_DIR", elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("GIT_DIR is set"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn usage_errors_are_one_json_object_with_json() {
    let r = TestRepo::new();
    calc_project(&r);
    for args in [&["--json", "search", "--bogus"][..], &["--json", "nonsense"], &["search", "--jsonl"]] {
        let out = r.lynx(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v: Value =
            serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&out)));
        assert_eq!((&v["ok"], &v["kind"]), (&Value::Bool(false), &Value::from("usage")), "{v}");
        assert!(
            v["error"].as_str().unwrap().contains("argument") || v["error"].as_str().unwrap().contains("subcommand"),
            "{v}"
        );
    }
    // A usage error found while answering (not by the parser) says so too.
    let out = r.lynx(&["--json", "search", "add", "--rev", "no-such-revision"]);
    let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!((out.status.code(), v["kind"].as_str()), (Some(2), Some("usage")), "{v}");
    // A missing argument is named in `error`, not cut at the colon before it.
    let out = r.lynx(&["--json", "find-definition"]);
    let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("were not provided") && e.contains("<SYMBOL>"), "{v}");
    // Without --json the error stays on stderr.
    let out = r.lynx(&["search", "--bogus"]);
    assert!(out.stdout.is_empty() && String::from_utf8_lossy(&out.stderr).contains("unexpected argument"));
}

#[test]
fn version_help_manual_and_completions() {
    let v = Command::new(BIN).arg("--version").output().unwrap();
    let v = stdout(&v);
    assert!(v.starts_with(&format!("git-lynx {} (commit ", env!("CARGO_PKG_VERSION"))), "{v}");
    assert!(v.contains("features:"), "{v}");
    let help = Command::new(BIN).args(["help", "search"]).output().unwrap();
    assert!(help.status.success() && stdout(&help).contains("--exact"), "{}", stdout(&help));
    let man = Command::new(BIN).arg("man").output().unwrap();
    assert!(
        stdout(&man).starts_with(".ie") || stdout(&man).contains(".TH git-lynx 1"),
        "{}",
        &stdout(&man)[..200.min(man.stdout.len())]
    );
    // The synopsis is clap's usage line, with no option left without its value.
    let page = stdout(&man);
    let synopsis =
        page.split(".SH SYNOPSIS").nth(1).and_then(|s| s.split(".SH").next()).unwrap_or_default().to_string();
    assert!(synopsis.contains("git lynx") && !synopsis.contains("\\-C \\fR]"), "{synopsis}");
    let dir = tempfile::tempdir().unwrap();
    // Installing where `man` does not look says how to make it look there.
    let text = stdout(
        &Command::new(BIN)
            .args(["man", "--install", "--dir"])
            .arg(dir.path().join("man1"))
            .env_remove("MANPATH")
            .output()
            .unwrap(),
    );
    assert!(text.contains("is not on MANPATH") && text.contains("export MANPATH="), "{text}");
    let out =
        Command::new(BIN).args(["--json", "man", "--install", "--dir"]).arg(dir.path().join("man1")).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["pages"].as_array().unwrap().len() > 20, "{v}");
    assert!(dir.path().join("man1/git-lynx.1").is_file() && dir.path().join("man1/git-lynx-search.1").is_file());
    if Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let page = Command::new("man").args(["-P", "cat", "git-lynx"]).env("MANPATH", dir.path()).output().unwrap();
        assert!(
            stdout(&page).contains("git-lynx"),
            "man finds the installed page: {}",
            String::from_utf8_lossy(&page.stderr)
        );
    }
    let bash = stdout(&Command::new(BIN).args(["completions", "bash"]).output().unwrap());
    assert!(bash.contains("complete -F _git__lynx") && bash.contains("_git_lynx()"), "bash completion and git's hook");
    // The script completes `git lynx sea<TAB>` when bash is here to run it.
    let script = dir.path().join("c.bash");
    std::fs::write(&script, &bash).unwrap();
    let probe = format!(
        "source {}; COMP_WORDS=(git lynx search --exa); COMP_CWORD=3; _git_lynx; echo \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert_eq!(stdout(&out).trim(), "--exact");
    for shell in ["zsh", "fish"] {
        let out = Command::new(BIN).args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && stdout(&out).contains("git-lynx"), "{shell}");
    }
}

/// `git lynx --help` is git's `man git-lynx`: `man --install` puts the pages beside the PATH
/// directory that holds git-lynx, where man-db looks without MANPATH; the first command at a
/// terminal installs them when missing, and one without a terminal writes nothing.
#[test]
fn the_manual_installs_where_man_finds_it_without_manpath() {
    let has_man = Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_man {
        assert!(
            std::env::var_os("LYNX_REQUIRE_MAN").is_none_or(|v| v != "1"),
            "LYNX_REQUIRE_MAN=1 but `man` is not installed (apt-get install man-db)"
        );
        eprintln!("skipped: no `man` on this machine");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let prefix = root.path().join("prefix");
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    // As cargo install or a package would: git-lynx in a directory on PATH (a link: the
    // directory on PATH counts, not where the link points).
    std::os::unix::fs::symlink(BIN, bin.join("git-lynx")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let lynx = bin.join("git-lynx");
    let cmd = |program: &std::path::Path, args: &[&str]| -> Command {
        let mut c = Command::new(program);
        c.args(args).env("HOME", &home).env("PATH", &path).env_remove("MANPATH").env("MANPAGER", "cat");
        isolate(&mut c);
        c
    };
    let which = |name: &str| std::path::PathBuf::from(name);
    let pages = prefix.join("share/man/man1");
    let out = cmd(&lynx, &["man", "--install"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = stdout(&out);
    assert!(text.contains(&pages.display().to_string()) && !text.contains("MANPATH"), "{text}");
    assert!(pages.join("git-lynx.1").is_file() && pages.join("git-lynx-search.1").is_file());
    assert!(!home.join(".local/share/man").exists(), "the binary's own tree came first");
    // man-db finds it from PATH alone.
    let found = cmd(&which("man"), &["-w", "git-lynx"]).output().unwrap();
    assert_eq!(stdout(&found).trim(), pages.join("git-lynx.1").display().to_string(), "{found:?}");
    // And git's `git lynx --help` shows it (git runs `man git-lynx`).
    let help = cmd(&which("git"), &["lynx", "--help"]).output().unwrap();
    let help_text = stdout(&help);
    assert!(
        help.status.success() && help_text.contains("SYNOPSIS") && help_text.contains("git lynx"),
        "{help_text}\n{}",
        String::from_utf8_lossy(&help.stderr)
    );
    let short = cmd(&which("git"), &["lynx", "help"]).output().unwrap();
    assert!(short.status.success() && stdout(&short).contains("Usage: git lynx"), "{}", stdout(&short));

    // The first command a person runs installs a missing manual, and says so once.
    std::fs::remove_dir_all(prefix.join("share")).unwrap();
    let r = TestRepo::new();
    // No terminal (a script, a hook, an MCP client): nothing is written.
    let out = cmd(&lynx, &["status"]).current_dir(r.path()).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("manual"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!pages.join("git-lynx.1").exists(), "written without a terminal");
    if Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success()) {
        // `script` runs the command on a pseudo-terminal and copies what it printed.
        let at_terminal =
            || cmd(&which("script"), &["-qec", "git-lynx status", "/dev/null"]).current_dir(r.path()).output().unwrap();
        let first = stdout(&at_terminal());
        assert!(first.contains("installed the manual pages in") && first.contains("git lynx --help"), "{first}");
        assert!(pages.join("git-lynx.1").is_file(), "{first}");
        let second = stdout(&at_terminal());
        assert!(!second.contains("manual"), "said once: {second}");
    }
}

#[test]
fn quieter_defaults_doctor_warnings_and_typos() {
    let r = TestRepo::new();
    calc_project(&r);
    // No model in the (empty) cache: a warning, not a failure — unless --strict.
    let out = r.lynx(&["doctor"]);
    assert!(stdout(&out).contains("WARN"), "{}", stdout(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(r.lynx(&["doctor", "--strict"]).status.code(), Some(1));
    // A typo is not taken for another symbol; the answer names the candidates.
    let v = r.json(&["describe-symbol", "totl"]);
    assert_eq!(v["matched"], false);
    assert_eq!(v["suggestions"][0], "total", "{v}");
    let v = r.json(&["find-definition", "ad"]);
    assert_eq!(v["matched"], false, "a substring is not a match: {v}");
    assert!(r.text(&["graph", "query", "callers", "totl"]).contains("did you mean: total?"));
    // `index --quiet` says nothing; the source name can be given as a word.
    let out = r.lynx(&["index", "--quiet"]);
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = r.lynx(&["--json", "update-source-index", "nosuch"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("nosuch"), "{}", stdout(&out));
    // A committed file may turn the dense layer off.
    r.write("lynx.toml", "[model]\nname = \"none\"\n");
    let out = r.lynx(&["search", "add"]);
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn grep_habits_work_or_are_recognised() {
    let r = TestRepo::new();
    r.write("a.py", "retry = 1\nretrying = 2\nretry_count = retry + 1\n");
    r.write("b.py", "nothing here\n");
    r.commit_all("first");
    // -w: whole words only; -c: counts per file; -F: a fixed string, like --exact.
    let w = r.text(&["--no-dense", "search", "--exact", "retry", "-w"]);
    let lines: Vec<&str> = w.lines().filter(|l| l.starts_with("a.py:")).collect();
    assert_eq!(lines, ["a.py:1:retry = 1", "a.py:3:retry_count = retry + 1"], "{w}");
    let c = r.text(&["--no-dense", "search", "-F", "retry", "-c"]);
    assert!(c.lines().any(|l| l == "a.py:3"), "{c}");
    let v = r.json(&["--no-dense", "search", "-F", "retry", "-c"]);
    assert_eq!(v["counts"], serde_json::json!([["a.py", 3]]), "{v}");
    // The summary leads, as in ranked search.
    assert!(w.lines().next().unwrap().contains("exact \"retry\""), "{w}");
    // No match: 0 by default ("found nothing" is an answer), 1 with --exit-code, as grep.
    assert_eq!(r.lynx(&["--no-dense", "search", "--exact", "platypus"]).status.code(), Some(0));
    assert_eq!(r.lynx(&["--no-dense", "search", "--exact", "platypus", "--exit-code"]).status.code(), Some(1));
    assert_eq!(r.lynx(&["--no-dense", "search", "--exact", "retry", "--exit-code"]).status.code(), Some(0));
    // `-C 3` is git's directory; the error says how to ask for context.
    let out = r.lynx(&["search", "--exact", "retry", "-C", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--context 3"), "{}", String::from_utf8_lossy(&out.stderr));
}
