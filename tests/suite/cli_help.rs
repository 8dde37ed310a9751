//! The command line documents itself: every option has help text, and the help and version
//! output keep their shape (snapshots of the parts a user reads first).

use clap::CommandFactory;

fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") || arg.is_hide_set() {
            continue;
        }
        if arg.get_help().is_none() && arg.get_long_help().is_none() {
            missing.push(format!("{path} {id}"));
        }
    }
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" || sub.is_hide_set() {
            continue;
        }
        if sub.get_about().is_none() {
            missing.push(format!("{path} {} (the command itself)", sub.get_name()));
        }
        walk(sub, &format!("{path} {}", sub.get_name()), missing);
    }
}

#[test]
fn every_option_and_command_has_help_text() {
    let cmd = lynx::cli::Cli::command();
    let mut missing = Vec::new();
    walk(&cmd, "git lynx", &mut missing);
    assert!(missing.is_empty(), "options without help text:\n{}", missing.join("\n"));
}

#[test]
fn the_command_line_is_well_formed() {
    lynx::cli::Cli::command().debug_assert();
}

use crate::common;
use common::*;

/// Compares `actual` with `tests/snapshots/<name>.txt`; `LYNX_UPDATE_SNAPSHOTS=1` rewrites it.
fn snapshot(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(format!("{name}.txt"));
    if std::env::var_os("LYNX_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no snapshot {}; run with LYNX_UPDATE_SNAPSHOTS=1 and review it", path.display()));
    assert!(
        expected == actual,
        "{name} changed (LYNX_UPDATE_SNAPSHOTS=1 to accept):\n--- expected\n{expected}\n--- actual\n{actual}"
    );
}

/// Commit ids vary with the clock: name them.
fn normalise(text: &str) -> String {
    let re = regex::Regex::new(r"\b[0-9a-f]{12}\b").unwrap();
    re.replace_all(text, "<commit>").into_owned()
}

#[test]
fn help_snapshots() {
    for (name, args) in
        [("help", &["--help"][..]), ("help-search", &["search", "--help"]), ("help-impact", &["impact", "--help"])]
    {
        let out = std::process::Command::new(BIN).args(args).output().unwrap();
        assert!(out.status.success());
        snapshot(name, &String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn text_output_snapshots() {
    let r = TestRepo::new();
    calc_project(&r);
    r.write("src/calc.py", "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n    return b + a\n\n\ndef total(xs):\n    s = 0\n    for x in xs:\n        s = add(s, x)\n    return s\n");
    r.git(&["add", "src/calc.py"]);
    for (name, args) in [
        ("text-find-usages", &["find-usages", "add"][..]),
        ("text-describe-symbol", &["describe-symbol", "total"]),
        ("text-search-exact", &["search", "--exact", "add", "-B", "1"]),
        ("text-search", &["--no-dense", "search", "total numbers", "-k", "2", "--lines", "2"]),
        ("text-impact-staged", &["impact", "--staged"]),
        ("text-impact-summary", &["impact", "--staged", "--format", "summary"]),
    ] {
        snapshot(name, &normalise(&r.text(args)));
    }
}
