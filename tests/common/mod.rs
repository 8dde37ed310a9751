//! Shared helpers for integration tests: real git repositories in temp dirs (made with the
//! `git` CLI) and the real `git-lynx` binary.
#![allow(dead_code)]

pub mod mcp;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-lynx");

pub struct TestRepo {
    pub dir: tempfile::TempDir,
}

/// Writes `dir/lynx-workspace.toml` listing `repos` (name, path) in order; its path.
pub fn write_workspace(dir: &Path, repos: &[(&str, &Path)]) -> PathBuf {
    let file = dir.join("lynx-workspace.toml");
    let text: String =
        repos.iter().map(|(name, path)| format!("[[repo]]\npath = {path:?}\nname = {name:?}\n\n")).collect();
    std::fs::write(&file, text).unwrap();
    file
}

/// Every entry under `dir` that is not a directory, at any depth, sorted (none when `dir` does
/// not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// Isolates git and lynx from the machine's global configuration.
pub fn isolate(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env_remove("LYNX_MODEL")
        .env_remove("LYNX_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("LYNX_OBJECTS_URL")
        .env("LYNX_LOG", "warn")
        // Nor from the developer's own Lynx configuration.
        .env("LYNX_CONFIG_HOME", "/nonexistent/lynx-test-config")
        // Never reach the network or a developer's model cache from tests.
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", "/nonexistent/lynx-test-hf-home")
        .env_remove("HF_HUB_CACHE")
        // Tests see what happens without a model unless they ask for the built-in one
        // (tests/suite/models.rs removes this).
        .env("LYNX_BUILTIN_MODEL", "0")
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        let r = TestRepo { dir };
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "commit.gpgsign", "false"]);
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.file(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn write_bytes(&self, rel: &str, content: &[u8]) {
        let p = self.file(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.file(rel)).unwrap();
    }

    /// Every file under `rel` in the repository (see [`files_under`]).
    pub fn files_under(&self, rel: &str) -> Vec<PathBuf> {
        files_under(&self.file(rel))
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = isolate(Command::new("git").args(args).current_dir(self.path())).output().unwrap();
        assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn commit_all(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args).current_dir(self.path());
        isolate(&mut c);
        c
    }

    pub fn lynx(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs with `--json`, asserts success and one JSON object on stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self.lynx(&full);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "git lynx {args:?} failed ({}): {stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not one JSON object ({e}): {stdout}"));
        assert_eq!(v["ok"], true, "{v}");
        v
    }

    /// Runs with `--json` and returns the object whatever the exit code (doctor's 0/1/2).
    pub fn json_any(&self, args: &[&str]) -> Value {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self.lynx(&full);
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    pub fn text(&self, args: &[&str]) -> String {
        let out = self.lynx(args);
        assert!(out.status.success(), "git lynx {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Paths of search results.
    pub fn search_paths(&self, args: &[&str]) -> Vec<String> {
        let mut full = vec!["search"];
        full.extend_from_slice(args);
        let v = self.json(&full);
        v["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
    }
}

/// A small multi-language project with distinctive words in each file.
pub fn seed_project(r: &TestRepo, n: usize) {
    for i in 0..n {
        r.write(
            &format!("src/mod{i}.py"),
            &format!("def handler_{i}(request):\n    \"\"\"Handle request number {i}.\"\"\"\n    return compute_{i}(request) + {i}\n\n\ndef compute_{i}(x):\n    return x * {i}\n"),
        );
    }
    r.write("README.md", "# Demo\n\nA demo project for tests.\n");
}

/// Whether Python can import `module` (a test prerequisite that `.ci/run` installs).
pub fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a prerequisite the tests can run without is present. Missing, the test says it is
/// skipped; but when `LYNX_REQUIRE_<NAME>=1` (CI sets it for what `.ci/run` installs), a
/// missing prerequisite fails the test instead of letting CI pass without running it.
pub fn prerequisite(name: &str, present: bool, why: &str) -> bool {
    if present {
        return true;
    }
    let var = format!("LYNX_REQUIRE_{}", name.to_ascii_uppercase());
    if std::env::var(&var).is_ok_and(|v| v == "1") {
        panic!("{name} is required here ({var}=1) but missing: {why}");
    }
    eprintln!("skipped: {name} is missing ({why})");
    false
}

/// A small Python project with a call graph (add ← total ← Square.area), a subclass and a test,
/// committed as "first".
pub fn calc_project(r: &TestRepo) {
    r.write("src/calc.py", "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n    return a + b\n\n\ndef total(xs):\n    s = 0\n    for x in xs:\n        s = add(s, x)\n    return s\n");
    r.write("src/shapes.py", "class Shape:\n    def area(self):\n        return 0\n\n\nclass Square(Shape):\n    def area(self):\n        return total([1, 2])\n");
    r.write("tests/test_calc.py", "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n");
    r.write("README.md", "# Calc\n\nAdds numbers.\n");
    r.commit_all("first");
}
