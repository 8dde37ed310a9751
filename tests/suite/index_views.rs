//! Object store, views and lexical search end to end, on real git repositories.

use crate::common;
use common::*;

#[test]
fn second_commit_reprocesses_only_the_changed_blob() {
    let r = TestRepo::new();
    seed_project(&r, 12);
    r.commit_all("first");
    let first = r.json(&["index", "--rev", "HEAD"]);
    assert_eq!(first["blobs_new"], 13, "{first}");
    assert_eq!(first["blobs_reused"], 0);
    for key in ["files_seen", "blobs_new", "blobs_reused", "chunks_written", "segments_written", "skipped", "seconds"] {
        assert!(first.get(key).is_some(), "missing {key} in {first}");
    }
    r.write("src/mod3.py", "def zebra_fresh(request):\n    return 'changed'\n");
    r.commit_all("second");
    let second = r.json(&["index", "--rev", "HEAD"]);
    assert_eq!(second["blobs_new"], 1, "{second}");
    assert_eq!(second["blobs_reused"], 12);
    assert_eq!(second["files_seen"], 13);
    // Both revisions answer from their own content.
    assert!(r.search_paths(&["--rev", "HEAD~1", "zebra_fresh"]).is_empty());
    assert_eq!(r.search_paths(&["--rev", "HEAD", "zebra_fresh"]), ["src/mod3.py"]);
    assert_eq!(r.search_paths(&["--rev", "HEAD~1", "compute_3"])[0], "src/mod3.py");
}

#[test]
fn rename_without_change_reprocesses_nothing_and_branches_are_free() {
    let r = TestRepo::new();
    seed_project(&r, 5);
    r.commit_all("first");
    r.json(&["index", "--rev", "HEAD"]);
    r.git(&["mv", "src/mod1.py", "src/renamed.py"]);
    r.commit_all("rename");
    let renamed = r.json(&["index", "--rev", "HEAD"]);
    assert_eq!(renamed["blobs_new"], 0, "{renamed}");
    assert_eq!(r.search_paths(&["compute_1"])[0], "src/renamed.py");

    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("src/feature.py", "def feature_flag():\n    return 'on'\n");
    r.commit_all("feature");
    let f1 = r.json(&["index"]);
    assert_eq!(f1["blobs_new"], 1, "{f1}");
    r.git(&["checkout", "-q", "main"]);
    let m = r.json(&["index"]);
    assert_eq!(m["blobs_new"], 0, "{m}");
    r.git(&["checkout", "-q", "feature"]);
    let f2 = r.json(&["index"]);
    assert_eq!(f2["blobs_new"], 0, "{f2}");
    r.git(&["checkout", "-q", "main"]);
    assert_eq!(r.json(&["index"])["blobs_new"], 0);
}

#[test]
fn working_tree_edits_staged_untracked_and_deleted_files() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    r.commit_all("first");
    r.write("src/mod0.py", "def original_okapi():\n    return 0\n");
    r.commit_all("okapi");
    assert_eq!(r.search_paths(&["original_okapi"]), ["src/mod0.py"]);

    // Unstaged edit: new content is searchable, old is gone.
    r.write("src/mod0.py", "def zebra_unstaged():\n    return 1\n");
    assert_eq!(r.search_paths(&["zebra_unstaged"]), ["src/mod0.py"]);
    assert!(r.search_paths(&["original_okapi"]).is_empty());
    // The committed revision still answers with the committed content.
    assert_eq!(r.search_paths(&["--rev", "HEAD", "original_okapi"]), ["src/mod0.py"]);

    // Staged edit, then a further unstaged edit: the working tree wins.
    r.write("src/mod1.py", "def yakstaged():\n    return 2\n");
    r.git(&["add", "src/mod1.py"]);
    assert_eq!(r.search_paths(&["yakstaged"]), ["src/mod1.py"]);
    r.write("src/mod1.py", "def emulater():\n    return 3\n");
    assert_eq!(r.search_paths(&["emulater"]), ["src/mod1.py"]);
    assert!(r.search_paths(&["yakstaged"]).is_empty());

    // Untracked files appear unless ignored.
    r.write("notes/untracked.py", "def walrusfree():\n    pass\n");
    r.write(".gitignore", "ignored/\n*.log\n!keep.log\n");
    r.write("ignored/secret.py", "def narwhalhidden():\n    pass\n");
    r.write("debug.log", "ibexlogged\n");
    r.write("keep.log", "lemurkept\n");
    assert_eq!(r.search_paths(&["walrusfree"]), ["notes/untracked.py"]);
    assert!(r.search_paths(&["narwhalhidden"]).is_empty());
    assert!(r.search_paths(&["ibexlogged"]).is_empty());
    assert_eq!(r.search_paths(&["lemurkept"]), ["keep.log"]);

    // Deleted files disappear.
    assert_eq!(r.search_paths(&["handler_2"])[0], "src/mod2.py");
    r.remove("src/mod2.py");
    assert!(!r.search_paths(&["handler_2"]).contains(&"src/mod2.py".to_string()));
    r.git(&["rm", "-q", "--cached", "src/mod2.py"]);
    assert!(!r.search_paths(&["handler_2"]).contains(&"src/mod2.py".to_string()));
}

#[test]
fn every_skip_reason_is_reported() {
    let r = TestRepo::new();
    r.write("ok.py", "def fine():\n    pass\n");
    r.write_bytes("image.bin", b"\x89PNG\x00\x01\x02 binary");
    r.write("big.txt", &"large content line\n".repeat(200));
    r.write("model.onnx", "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n");
    r.write("gen/out.py", "def quokkagen():\n    pass\n");
    r.write("vendor/lib.py", "def wombatvend():\n    pass\n");
    r.write("data.csv", "a,b\n1,2\n");
    r.write(".gitattributes", "gen/** linguist-generated\nvendor/** linguist-vendored\n*.csv -diff\n");
    r.write("lynx.toml", "[index]\nmax_file_size = 1000\nexclude = ['docs/private']\n");
    r.write("docs/private/x.md", "# secret\n");
    std::os::unix::fs::symlink("ok.py", r.file("link.py")).unwrap();
    r.git(&["add", "-A"]);
    // A submodule gitlink, added directly to the index.
    r.git(&["update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,sub"]);
    r.git(&["commit", "-q", "-m", "all kinds"]);
    for args in [vec!["index"], vec!["index", "--rev", "HEAD"]] {
        let v = r.json(&args);
        let skipped = &v["skipped"];
        for (reason, n) in [
            ("binary", 1),
            ("too_large", 1),
            ("lfs_pointer", 1),
            ("generated", 1),
            ("vendored", 1),
            ("no_diff", 1),
            ("symlink", 1),
            ("submodule", 1),
            ("excluded", 1),
        ] {
            assert_eq!(skipped[reason], n, "{reason} in {args:?}: {v}");
        }
    }
    assert_eq!(r.search_paths(&["fine"]), ["ok.py"]);
    assert!(r.search_paths(&["quokkagen"]).is_empty());
    assert!(r.search_paths(&["wombatvend"]).is_empty());
}

#[test]
fn json_envelope_on_success_failure_and_usage_errors() {
    let r = TestRepo::new();
    seed_project(&r, 2);
    r.commit_all("first");
    let v = r.json(&["search", "handler", "-k", "1"]);
    assert_eq!(v["operation"], "search");
    assert_eq!(v["view"]["kind"], "worktree");
    let hit = &v["results"][0];
    for key in ["path", "start_line", "end_line", "symbol", "score"] {
        assert!(hit.get(key).is_some(), "missing {key}: {hit}");
    }
    let out = r.lynx(&["--json", "search", "x", "--rev", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(v["error"].as_str().unwrap().contains("no-such-branch"), "{v}");
    // Found nothing is an answer, not an error.
    let v = r.json(&["search", "qqqqnothingmatches"]);
    assert_eq!(v["results"].as_array().unwrap().len(), 0);
    let text = r.text(&["search", "handler_1", "-k", "1"]);
    assert!(text.starts_with("view: worktree (HEAD "), "{text}");
    assert!(text.contains("\nsrc/mod1.py:1: handler_1 (1-3, "), "{text}");
}

#[test]
fn filters_apply_before_ranking() {
    let r = TestRepo::new();
    // Many strong matches in Python, one weak match in Rust.
    for i in 0..40 {
        r.write(&format!("py/m{i}.py"), "def tokenizer_tokenizer_tokenizer():\n    return 'tokenizer tokenizer'\n");
    }
    r.write("rs/lib.rs", "// mentions tokenizer once\nfn other() {}\n");
    r.commit_all("first");
    let hits = r.search_paths(&["tokenizer", "--ext", ".rs", "-k", "5"]);
    assert_eq!(hits, ["rs/lib.rs"]);
    let hits = r.search_paths(&["tokenizer", "--glob", "rs/**", "-k", "5"]);
    assert_eq!(hits, ["rs/lib.rs"]);
    let hits = r.search_paths(&["tokenizer", "--path-contains", "m17", "-k", "5"]);
    assert_eq!(hits, ["py/m17.py"]);
}

#[test]
fn gc_keeps_what_refs_need_and_removes_the_rest() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    r.commit_all("first");
    r.json(&["index"]);
    // An uncommitted file indexed, then removed: its segment is garbage (after the grace
    // period, so backdate it).
    r.write("tmp/scratch.py", "def scratch_only():\n    pass\n");
    r.json(&["index"]);
    r.remove("tmp/scratch.py");
    let objects = r.file(".lynx/objects");
    for e in walk(&objects) {
        let f = std::fs::File::options().write(true).open(&e).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(7200)).unwrap();
    }
    std::fs::write(objects.join("aa.12345678.0.lynx-tmp"), b"partial").unwrap();
    let total = walk(&objects).len();
    let dry = r.json(&["gc", "--dry-run"]);
    assert_eq!(dry["segments_removed"], 3, "{dry}"); // chunks, lexical and graph facts of the scratch blob
    assert_eq!(dry["temp_files_removed"], 1);
    assert_eq!(walk(&objects).len(), total);
    let done = r.json(&["gc"]);
    assert_eq!(done["segments_removed"], 3, "{done}");
    assert!(!objects.join("aa.12345678.0.lynx-tmp").exists());
    // Everything the working tree needs is still there: nothing to re-process.
    assert_eq!(r.json(&["index"])["blobs_new"], 0);
    assert_eq!(r.search_paths(&["compute_2"])[0], "src/mod2.py");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().unwrap() != "catalog" {
                out.extend(walk(&p));
            }
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn indexing_in_small_batches_gives_the_same_answers() {
    let r = TestRepo::new();
    // About 1.8 MB of source: two batches of 1 MB.
    for i in 0..32 {
        let mut body = String::new();
        for j in 0..800 {
            body.push_str(&format!("def handler_{i}_{j}(request):\n    return route_{j}(request, {i})\n\n"));
        }
        r.write(&format!("src/mod{i}.py"), &body);
    }
    r.commit_all("init");
    let run = |batch_mb: Option<u64>| {
        let _ = std::fs::remove_dir_all(r.file(".lynx"));
        if let Some(mb) = batch_mb {
            std::fs::create_dir_all(r.file(".lynx")).unwrap();
            std::fs::write(r.file(".lynx/config.toml"), format!("[index]\nbatch_mb = {mb}\n")).unwrap();
        }
        let index = r.json(&["--no-dense", "index"]);
        let search = r.json(&["--no-dense", "search", "handler 7 route 123", "-k", "5"]);
        (index, search["results"].clone())
    };
    let (whole, whole_hits) = run(None);
    let (small, small_hits) = run(Some(1));
    assert_eq!(whole["blobs_new"], 32);
    assert_eq!(small["blobs_new"], 32);
    assert_eq!(whole["chunks_written"], small["chunks_written"]);
    // One segment per layer in one batch; at least two per layer in two.
    assert_eq!(whole["segments_written"], 3, "{whole}");
    assert!(small["segments_written"].as_u64().unwrap() >= 6, "{small}");
    assert_eq!(whole_hits, small_hits);
    // Zero is refused with the key named.
    std::fs::write(r.file(".lynx/config.toml"), "[index]\nbatch_mb = 0\n").unwrap();
    let out = r.lynx(&["--no-dense", "index"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("index.batch_mb"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sets the mtime of everything in the working tree (not `.git`, not the store) to an hour ago,
/// so the untracked-file list is old enough to be kept.
fn age_worktree(r: &TestRepo) {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    fn walk(dir: &std::path::Path, then: std::time::SystemTime) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if name == ".git" || name == ".lynx" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), then);
            }
            std::fs::File::open(e.path()).unwrap().set_modified(then).unwrap();
        }
        std::fs::File::open(dir).unwrap().set_modified(then).unwrap();
    }
    walk(r.path(), then);
}

/// Searches, returning the paths found and whether the untracked-file list was reused.
fn search_untracked(r: &TestRepo, word: &str) -> (Vec<String>, bool) {
    let out = r.cmd(&["--json", "search", word]).env("LYNX_LOG", "debug").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths = v["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect();
    let log = String::from_utf8_lossy(&out.stderr);
    let reused = log.contains("untracked files:") && log.contains("kept,");
    (paths, reused)
}

#[test]
fn the_kept_untracked_list_sees_every_kind_of_change() {
    let r = TestRepo::new();
    seed_project(&r, 3);
    r.write(".gitignore", "ignored/\n");
    r.commit_all("first");
    r.json(&["index"]);
    r.write("notes/a.py", "def aardvarknote():\n    pass\n");
    r.write("ignored/x.py", "def hiddenheron():\n    pass\n");

    // Fresh directories are not trusted to show a later change in the same tick: walked, not kept.
    assert_eq!(search_untracked(&r, "aardvarknote"), (vec!["notes/a.py".to_string()], false));
    assert!(!search_untracked(&r, "aardvarknote").1);
    age_worktree(&r);
    assert_eq!(search_untracked(&r, "aardvarknote"), (vec!["notes/a.py".to_string()], false));
    assert_eq!(search_untracked(&r, "aardvarknote"), (vec!["notes/a.py".to_string()], true));

    // A new file in a directory that was walked.
    r.write("notes/b.py", "def bisonnote():\n    pass\n");
    assert_eq!(search_untracked(&r, "bisonnote"), (vec!["notes/b.py".to_string()], false));

    // An ignore file edited in place (its directory's mtime does not move).
    age_worktree(&r);
    assert_eq!(search_untracked(&r, "hiddenheron"), (vec![], false));
    assert_eq!(search_untracked(&r, "hiddenheron"), (vec![], true));
    std::fs::OpenOptions::new().write(true).truncate(true).open(r.file(".gitignore")).unwrap();
    assert_eq!(search_untracked(&r, "hiddenheron").0, ["ignored/x.py"]);

    // A tracked file taken out of the index stays in the working tree as an untracked file.
    r.write(".gitignore", "ignored/\n");
    age_worktree(&r);
    assert_eq!(search_untracked(&r, "handler_1").0[0], "src/mod1.py");
    assert!(search_untracked(&r, "handler_1").1);
    r.git(&["rm", "-q", "--cached", "src/mod1.py"]);
    assert_eq!(search_untracked(&r, "handler_1").0[0], "src/mod1.py");

    // A new directory with a file, deep under a walked one; then its removal.
    age_worktree(&r);
    search_untracked(&r, "aardvarknote");
    assert!(search_untracked(&r, "aardvarknote").1);
    r.write("notes/deeper/c.py", "def caribounote():\n    pass\n");
    assert_eq!(search_untracked(&r, "caribounote").0, ["notes/deeper/c.py"]);
    age_worktree(&r);
    search_untracked(&r, "caribounote");
    assert!(search_untracked(&r, "caribounote").1);
    std::fs::remove_dir_all(r.file("notes/deeper")).unwrap();
    assert!(search_untracked(&r, "caribounote").0.is_empty());

    // A damaged record is walked past and replaced.
    age_worktree(&r);
    search_untracked(&r, "aardvarknote");
    let dir = r.file(".lynx/cache/untracked");
    let kept: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut bytes = std::fs::read(&kept[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&kept[0], &bytes).unwrap();
    assert_eq!(search_untracked(&r, "aardvarknote"), (vec!["notes/a.py".to_string()], false));
    assert_eq!(search_untracked(&r, "aardvarknote"), (vec!["notes/a.py".to_string()], true));
}

/// Lynx's own outputs are never its answers: an exported graph names every symbol it draws,
/// and neither the default export under `.lynx/exports/` nor one written into the working tree
/// with `--out` is cited by a later search.
#[test]
fn exported_graphs_are_left_out_of_views() {
    let r = TestRepo::new();
    r.write("src/den.py", "def wombat_burrow():\n    return 1\n\n\ndef dig():\n    return wombat_burrow()\n");
    r.commit_all("first");
    let v = r.json(&["--no-dense", "graph", "export", "--symbol", "wombat_burrow"]);
    let default = v["path"].as_str().unwrap().to_string();
    assert!(default.contains(".lynx/exports/graph-wombat_burrow.html"), "{v}");
    std::fs::create_dir_all(r.file("out")).unwrap();
    let v = r.json(&["--no-dense", "graph", "export", "--symbol", "wombat_burrow", "--out", "out/graph.html"]);
    assert!(r.file("out/graph.html").is_file(), "{v}");
    assert!(std::fs::read_to_string(r.file("out/graph.html")).unwrap().contains("wombat_burrow"));
    // A file of the user's own beside it is still content.
    r.write("out/notes.md", "wombat_burrow is where the dig ends\n");
    let usages = r.json(&["--no-dense", "find-usages", "wombat_burrow"]);
    let cited: Vec<String> = usages["usages"]
        .as_array()
        .or_else(|| usages["results"].as_array())
        .unwrap_or_else(|| panic!("{usages}"))
        .iter()
        .filter_map(|u| u["path"].as_str().map(String::from))
        .collect();
    assert!(cited.iter().all(|p| !p.ends_with(".html")), "{cited:?}");
    assert!(cited.iter().any(|p| p == "src/den.py"), "{cited:?}");
    let exact = r.text(&["search", "--exact", "wombat_burrow", "-l"]);
    assert!(!exact.contains("graph.html") && exact.contains("src/den.py") && exact.contains("out/notes.md"), "{exact}");
}
