//! A workspace: one command or one server answering across the repositories a user-owned
//! workspace file lists, each at its own revision, every hit naming its repository.

use crate::common;

use common::TestRepo;
use common::mcp::Client;
use serde_json::{Value, json};

/// A shared library and two services that call its function (one with a test), each its own
/// git repository, and a workspace file listing them (made with `workspace add`).
struct Fleet {
    lib: TestRepo,
    billing: TestRepo,
    shipping: TestRepo,
    dir: tempfile::TempDir,
}

impl Fleet {
    fn new() -> Fleet {
        let lib = TestRepo::new();
        lib.write(
            "sharedlib/retry.py",
            "def retry_call(fn, attempts=3):\n    for _ in range(attempts):\n        try:\n            return fn()\n        except IOError:\n            pass\n    raise IOError(\"gave up\")\n",
        );
        lib.write("sharedlib/__init__.py", "");
        lib.commit_all("lib");
        let billing = TestRepo::new();
        billing.write(
            "billing.py",
            "from sharedlib.retry import retry_call\n\n\ndef fetch_invoice(client):\n    return retry_call(lambda: client.get(\"/invoice\"))\n",
        );
        billing.commit_all("billing");
        let shipping = TestRepo::new();
        shipping.write(
            "shipping.py",
            "from sharedlib.retry import retry_call\n\n\ndef ship_order(api):\n    return retry_call(api.ship)\n",
        );
        shipping.write(
            "tests/test_shipping.py",
            "from shipping import ship_order\n\n\ndef test_ship_order():\n    assert ship_order(None) is None\n",
        );
        shipping.commit_all("shipping");
        let fleet = Fleet { lib, billing, shipping, dir: tempfile::tempdir().unwrap() };
        for (repo, name) in [(&fleet.lib, "lib"), (&fleet.billing, "billing"), (&fleet.shipping, "shipping")] {
            let path = repo.path().to_str().unwrap().to_string();
            fleet.ws(&["workspace", "add", &path, "--name", name]);
        }
        fleet
    }

    fn file(&self) -> String {
        self.dir.path().join("lynx-workspace.toml").to_str().unwrap().to_string()
    }

    /// `git lynx --workspace FILE --no-dense ARGS --json` run from a directory outside every
    /// repository.
    fn ws(&self, args: &[&str]) -> Value {
        let file = self.file();
        let mut full = vec!["--json", "--no-dense", "--workspace", &file];
        full.extend_from_slice(args);
        let mut c = self.lib.cmd(&full);
        let out = c.current_dir(self.dir.path()).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }

    fn text(&self, args: &[&str]) -> String {
        let file = self.file();
        let mut full = vec!["--no-dense", "--workspace", &file];
        full.extend_from_slice(args);
        let out = self.lib.cmd(&full).current_dir(self.dir.path()).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// The sources of a fanned-out answer, by name.
fn parts(v: &Value) -> Vec<(String, Value)> {
    v["sources"]
        .as_array()
        .unwrap_or_else(|| panic!("not fanned out: {v}"))
        .iter()
        .map(|p| (p["source"].as_str().unwrap().to_string(), p.clone()))
        .collect()
}

#[test]
fn usages_and_impact_cross_repositories_and_each_hit_names_its_repository() {
    let f = Fleet::new();
    let listed = f.ws(&["workspace", "list"]);
    let names: Vec<&str> =
        listed["repositories"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["lib", "billing", "shipping"]);

    // The library defines it; each service that calls it answers after it, with its own sites.
    let usages = f.ws(&["find-usages", "retry_call"]);
    let p = parts(&usages);
    assert_eq!(p[0].0, "lib", "the definer first: {usages}");
    assert_eq!(p[0].1["matched"], true);
    let billing = p.iter().find(|(n, _)| n == "billing").unwrap_or_else(|| panic!("{usages}"));
    assert!(billing.1["results"].as_array().unwrap().iter().any(|u| u["path"] == "billing.py"), "{usages}");
    assert!(p.iter().any(|(n, _)| n == "shipping"), "{usages}");
    let text = f.text(&["find-usages", "retry_call"]);
    assert!(text.contains("source `billing` (uses it; defined in `lib`)"), "{text}");

    // Changing it reaches the services' callers and the shipping service's test.
    let impact = f.ws(&["impact", "retry_call"]);
    let p = parts(&impact);
    let shipping = &p.iter().find(|(n, _)| n == "shipping").unwrap_or_else(|| panic!("{impact}")).1;
    let callers: Vec<&str> =
        shipping["results"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap()).collect();
    assert!(callers.contains(&"ship_order"), "{impact}");
    let tests: Vec<&str> = shipping["tests"].as_array().unwrap().iter().filter_map(|t| t["symbol"].as_str()).collect();
    assert_eq!(tests, ["test_ship_order"], "{impact}");
    let billing = &p.iter().find(|(n, _)| n == "billing").unwrap_or_else(|| panic!("{impact}")).1;
    assert_eq!(billing["results"][0]["node"]["name"], "fetch_invoice", "{impact}");

    // Search asks every repository, each hit naming its own; `--repo` asks one.
    let all = f.ws(&["search", "retry_call", "-k", "10"]);
    let from: Vec<&str> = all["results"].as_array().unwrap().iter().map(|h| h["source"].as_str().unwrap()).collect();
    for name in ["lib", "billing", "shipping"] {
        assert!(from.contains(&name), "{name} missing: {all}");
    }
    let text = f.text(&["search", "retry_call"]);
    assert!(text.contains("[billing] billing.py:"), "{text}");
    let one = f.ws(&["search", "retry_call", "--repo", "billing"]);
    let paths: Vec<&str> = one["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| *p == "billing.py"), "{one}");
}

#[test]
fn a_pinned_repository_stays_at_its_revision_while_a_working_tree_follows_edits() {
    let f = Fleet::new();
    let first = f.lib.git(&["rev-parse", "HEAD"]).trim().to_string();
    f.lib.write("sharedlib/retry.py", "def retry_forever(fn):\n    while True:\n        fn()\n");
    f.lib.commit_all("replaced");
    // Pin the library at its first commit.
    f.ws(&["workspace", "remove", "lib"]);
    let path = f.lib.path().to_str().unwrap().to_string();
    f.ws(&["workspace", "add", &path, "--name", "lib", "--rev", &first]);
    let def = f.ws(&["find-definition", "retry_call", "--repo", "lib"]);
    assert_eq!(def["matched"], true, "the pinned revision still defines it: {def}");
    assert_eq!(def["view"]["commit"], first.as_str(), "{def}");
    // An edit in a working-tree repository is answered at once, without indexing by hand.
    f.billing.write("billing.py", "def settle_ledger_quarterly(book):\n    return book.close()\n");
    let hits = f.ws(&["search", "settle_ledger_quarterly", "--repo", "billing"]);
    assert_eq!(hits["results"][0]["symbol"], "settle_ledger_quarterly", "{hits}");
    let lib = f.ws(&["search", "retry_forever", "--repo", "lib"]);
    assert!(
        lib["results"].as_array().unwrap().iter().all(|h| h["symbol"] != "retry_forever"),
        "the pinned repository does not see its later commit: {lib}"
    );
}

#[test]
fn a_missing_repository_is_named_and_the_others_answer() {
    let f = Fleet::new();
    let gone = f.dir.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let gone_s = gone.to_str().unwrap().to_string();
    // Listed while it was a repository, then deleted.
    common::isolate(std::process::Command::new("git").args(["init", "-q"]).current_dir(&gone)).output().unwrap();
    f.ws(&["workspace", "add", &gone_s, "--name", "gone"]);
    std::fs::remove_dir_all(&gone).unwrap();
    let status = f.ws(&["workspace", "status"]);
    let state = status["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "gone")
        .map(|r| r["state"].as_str().unwrap().to_string())
        .unwrap();
    assert!(state.contains("does not exist"), "{status}");
    let text = f.text(&["find-usages", "retry_call"]);
    assert!(text.contains("source `lib`") && text.contains("skipped workspace repositories: `gone`"), "{text}");
    let text = f.text(&["search", "retry_call"]);
    assert!(text.contains("[lib]") && text.contains("skipped workspace repositories: `gone`"), "{text}");
    // Indexing the workspace indexes the others and names the missing one.
    let indexed = f.ws(&["index"]);
    let repos: Vec<&str> =
        indexed["repositories"].as_array().unwrap().iter().map(|r| r["repo"].as_str().unwrap()).collect();
    assert_eq!(repos, ["lib", "billing", "shipping"], "{indexed}");
    assert_eq!(indexed["missing"][0][0], "gone", "{indexed}");
    assert_eq!(indexed["files_seen"], 5, "{indexed}");
}

#[test]
fn a_workspace_file_inside_a_repository_is_not_read() {
    let f = Fleet::new();
    // A committed workspace file naming another repository changes nothing by itself.
    let other = f.billing.path().to_str().unwrap().to_string();
    f.lib.write("lynx-workspace.toml", &format!("[[repo]]\npath = {other:?}\n"));
    f.lib.commit_all("workspace file");
    let v = f.lib.json(&["--no-dense", "search", "fetch_invoice"]);
    assert!(v["results"].as_array().unwrap().iter().all(|h| h["path"] != "billing.py"), "{v}");
    assert!(v["results"].as_array().unwrap().iter().all(|h| h.get("source").is_none()), "{v}");
    let v = f.lib.json(&["--no-dense", "find-usages", "retry_call"]);
    assert!(v.get("sources").is_none(), "{v}");
}

#[test]
fn a_server_answers_across_the_workspace_and_takes_repo() {
    let f = Fleet::new();
    let file = f.file();
    let mut c = Client::spawn(&f.lib, &["--no-dense", "--workspace", &file, "serve", "--no-watch"]);
    let tools = c.request("tools/list", json!({}));
    let search = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "search").unwrap().clone();
    assert!(search["inputSchema"]["properties"]["repo"].is_object(), "{search}");
    let mut call =
        |tool: &str, args: Value| c.request("tools/call", json!({"name": tool, "arguments": args}))["result"].clone();
    let v = call("search", json!({"query": "retry_call", "repo": "shipping"}));
    let s = &v["structuredContent"];
    let paths: Vec<&str> = s["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| p.starts_with("shipping.py") || p.starts_with("tests/")), "{s}");
    let v = call("find_usages", json!({"symbol": "retry_call"}));
    let names: Vec<&str> =
        v["structuredContent"]["sources"].as_array().unwrap().iter().map(|p| p["source"].as_str().unwrap()).collect();
    assert!(names.contains(&"lib") && names.contains(&"billing") && names.contains(&"shipping"), "{v}");
    assert!(c.close().success());
}

/// The bytes of the segments under a repository's own object directory.
fn own_objects_bytes(repo: &TestRepo) -> u64 {
    common::files_under(&repo.file(".lynx/objects"))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

#[test]
fn a_fork_in_the_workspace_indexes_and_stores_only_what_it_adds() {
    let origin = TestRepo::new();
    // Files large enough that their rows, not a segment's fixed overhead, make up the store.
    for i in 0..6 {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ i;
        let mut word = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            format!("w{:x}", seed >> 24)
        };
        let body: String = (0..200).map(|_| format!("    {} = request.{}({})\n", word(), word(), word())).collect();
        origin.write(
            &format!("pkg/mod{i}.py"),
            &format!("def handler_{i}(request):\n{body}    return request.reply({i})\n"),
        );
    }
    origin.commit_all("origin");
    let fork = TestRepo::new();
    fork.git(&["fetch", "-q", origin.path().to_str().unwrap(), "main"]);
    fork.git(&["reset", "-q", "--hard", "FETCH_HEAD"]);
    fork.write("pkg/extra.py", "def fork_only_feature(payload):\n    return payload.double()\n");
    fork.commit_all("fork");
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_workspace(dir.path(), &[("origin", origin.path()), ("fork", fork.path())]);
    let file = file.to_str().unwrap();
    let run = |args: &[&str]| -> Value {
        let mut full = vec!["--json", "--no-dense", "--workspace", file];
        full.extend_from_slice(args);
        let out = origin.cmd(&full).current_dir(dir.path()).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    let indexed = run(&["index"]);
    let new = |i: usize| indexed["repositories"][i]["blobs_new"].as_u64().unwrap();
    assert_eq!((new(0), new(1)), (6, 1), "the fork processes only the file it adds: {indexed}");
    let (o, f) = (own_objects_bytes(&origin), own_objects_bytes(&fork));
    assert!(o > 0 && f < o / 2, "the shared files are stored once (origin {o} bytes, fork {f})");
    // The fork answers about the files it shares with the origin, and its own.
    let shared = run(&["find-definition", "handler_3", "--repo", "fork"]);
    assert_eq!(shared["matched"], true, "{shared}");
    assert_eq!(shared["results"][0]["path"], "pkg/mod3.py", "{shared}");
    let own = run(&["find-definition", "fork_only_feature", "--repo", "fork"]);
    assert_eq!(own["matched"], true, "{own}");
    // Indexing again finds everything in place.
    let again = run(&["index"]);
    assert_eq!(again["blobs_new"], 0, "{again}");
}

/// Waits (up to 20 s) until a line of the server's log holds every one of `words`; that line.
fn wait_for_log(log: &std::path::Path, words: &[&str]) -> String {
    let start = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| words.iter().all(|w| l.contains(w))) {
            return line.to_string();
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "no line with {words:?} in:\n{text}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_server_lets_go_of_idle_repositories_and_holds_to_its_memory_bound() {
    let f = Fleet::new();
    let file = f.file();
    let search = |c: &mut Client, repo: &str| {
        let v = c.request("tools/call", json!({"name": "search", "arguments": {"query": "retry_call", "repo": repo}}));
        let hits = v["result"]["structuredContent"]["results"].as_array().cloned().unwrap_or_default();
        assert!(!hits.is_empty(), "{repo}: {v}");
    };
    // Idle: a repository not asked about for a second has its views let go, and the next
    // question about it opens them again.
    f.lib.write(".lynx/config.toml", "[serve]\nrelease_idle_s = 1\n");
    let log = f.dir.path().join("idle.log");
    let mut c = Client::spawn_logging(&f.lib, &["--no-dense", "--workspace", &file, "serve", "--no-watch"], &log);
    search(&mut c, "billing");
    wait_for_log(&log, &["let go of the views of", "billing", "not asked about"]);
    search(&mut c, "billing");
    assert!(c.close().success());
    // Bound: over it, the repositories asked about least recently are let go, never the last.
    f.lib.write(".lynx/config.toml", "[serve]\nrelease_idle_s = 0\nmax_memory_mb = 1\n");
    let log = f.dir.path().join("bound.log");
    let mut c = Client::spawn_logging(&f.lib, &["--no-dense", "--workspace", &file, "serve", "--no-watch"], &log);
    search(&mut c, "billing");
    search(&mut c, "shipping");
    wait_for_log(&log, &["let go of the views of billing (resident"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("let go of the views of shipping"), "the last repository asked stays: {text}");
    search(&mut c, "billing");
    assert!(c.close().success());
}

#[test]
fn a_repository_locked_by_another_writer_is_named_and_the_others_answer() {
    let f = Fleet::new();
    f.ws(&["index"]);
    // Billing has an edit to index, and another process holds its store's write lock.
    f.billing.write("invoices.py", "def retry_call_for_invoices(c):\n    return c\n");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(f.billing.file(".lynx/lock"))
        .unwrap();
    lock.lock().unwrap();
    std::fs::write(f.billing.file(".lynx/lock.holder"), "pid 4242 (a test holding the lock) since 0").unwrap();
    let file = f.file();
    let out = f
        .lib
        .cmd(&["--json", "--no-dense", "--workspace", &file, "search", "retry_call"])
        .env("LYNX_LOCK_TIMEOUT", "0.5")
        .current_dir(f.dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    let sources: Vec<&str> = v["results"].as_array().unwrap().iter().filter_map(|h| h["source"].as_str()).collect();
    assert!(sources.contains(&"lib") && sources.contains(&"shipping") && !sources.contains(&"billing"), "{v}");
    let note = v["note"].as_str().unwrap_or("");
    assert!(note.contains("skipped `billing`") && note.contains("pid 4242"), "{v}");
    let status = f.ws(&["workspace", "status"]);
    let billing = status["repositories"].as_array().unwrap().iter().find(|r| r["name"] == "billing").unwrap().clone();
    assert!(billing["state"].as_str().unwrap().contains("being written by pid 4242"), "{status}");
    lock.unlock().unwrap();
    let again = f.ws(&["search", "retry_call_for_invoices", "--repo", "billing"]);
    assert_eq!(again["results"][0]["path"], "invoices.py", "{again}");
}
