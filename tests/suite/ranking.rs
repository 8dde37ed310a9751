//! Ranking priors through the binary: test files and prose yield to code unless the question is
//! about them, and a definition named in the query is lifted. Each prior is checked as the exact
//! factor between two queries with the same BM25 terms (the extra word matches nothing).

use crate::common;
use common::*;
use serde_json::Value;

fn scores(r: &TestRepo, q: &str) -> Vec<(String, f64)> {
    let v: Value = r.json(&["--no-dense", "search", q]);
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["score"].as_f64().unwrap()))
        .collect()
}

fn score_of(hits: &[(String, f64)], path: &str) -> f64 {
    hits.iter().find(|(p, _)| p == path).unwrap_or_else(|| panic!("{path} not in {hits:?}")).1
}

fn repo() -> TestRepo {
    let r = TestRepo::new();
    r.write(
        "src/retry.py",
        "def retry_request(send, attempts):\n    \"\"\"Retry a request with exponential backoff.\"\"\"\n    for n in range(attempts):\n        if send():\n            return True\n        sleep(2 ** n)\n    return False\n",
    );
    // The test and the changelog repeat the question's words more often than the code does.
    r.write(
        "tests/test_retry.py",
        "def test_backoff():\n    # retry request backoff: retry the request, backoff grows\n    assert retry_request(lambda: True, 3)\n    # retry request backoff again, request retry backoff\n",
    );
    r.write(
        "CHANGELOG.md",
        "# Changes\n\nRetry request backoff: retry a request with exponential backoff; request retry backoff tuned.\n",
    );
    r.write("src/policy.py", "class RetryPolicy:\n    \"\"\"How often to retry.\"\"\"\n    limit = 3\n");
    for i in 0..8 {
        r.write(&format!("src/other{i}.py"), &format!("def helper{i}(x):\n    return x + {i}\n"));
    }
    r.commit_all("init");
    // The file-name prior would lift src/retry.py (the query says "retry"): measured apart.
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), "[search]\nstem_factor = 1.0\n").unwrap();
    r
}

#[test]
fn tests_and_prose_yield_to_code_unless_asked_for() {
    let r = repo();
    let plain = scores(&r, "retry request backoff");
    assert_eq!(plain[0].0, "src/retry.py", "{plain:?}");
    // "fixture" and "documentation" match no file: same BM25, different priors.
    let about_tests = scores(&r, "retry request backoff fixture");
    let about_docs = scores(&r, "retry request backoff documentation");
    let ratio = |a: &[(String, f64)], b: &[(String, f64)], p: &str| score_of(a, p) / score_of(b, p);
    // Asked about, the demotion is lifted: the score grows by exactly 1 / factor.
    let lift_test = 1.0 / lynx_core::config::DEFAULT_TEST_FACTOR as f64;
    let lift_prose = 1.0 / lynx_core::config::DEFAULT_PROSE_FACTOR as f64;
    assert!(
        (ratio(&about_tests, &plain, "tests/test_retry.py") - lift_test).abs() < 1e-3,
        "{about_tests:?} vs {plain:?}"
    );
    assert!((ratio(&about_docs, &plain, "CHANGELOG.md") - lift_prose).abs() < 1e-3, "{about_docs:?} vs {plain:?}");
    assert!((ratio(&about_tests, &plain, "src/retry.py") - 1.0).abs() < 1e-6);
    // Undemoted, the test outscores the code: the prior is what put the code first.
    assert!(score_of(&about_tests, "tests/test_retry.py") > score_of(&about_tests, "src/retry.py"), "{about_tests:?}");
    assert_eq!(about_tests[0].0, "tests/test_retry.py");
}

#[test]
fn identifiers_written_in_the_query_lift_their_definition() {
    let r = repo();
    // The same word, bare and written as code (in backticks): the same BM25 terms.
    let words = scores(&r, "retrypolicy retry");
    let ident = scores(&r, "`retrypolicy` retry");
    let f = score_of(&ident, "src/policy.py") / score_of(&words, "src/policy.py");
    assert!((f - lynx_core::search::rank::IDENT_FACTOR as f64).abs() < 1e-3, "{ident:?} vs {words:?}");
    assert!((score_of(&ident, "src/retry.py") - score_of(&words, "src/retry.py")).abs() < 1e-6);
}

#[test]
fn deep_search_strength_is_judged_per_query_term() {
    let r = repo();
    // Enough other code for the words to be rare, as in a real repository.
    for i in 0..60 {
        r.write(
            &format!("src/mod{i}.py"),
            &format!("def compute{i}(values):\n    return sum(v * {i} for v in values)\n"),
        );
    }
    r.commit_all("more");
    // The same matching words, once alone and once among words that match nothing: the same
    // raw BM25, but only the short question is answered strongly by it.
    let padded = "retry request backoff zzqa zzqb zzqc zzqd zzqe zzqf zzqg zzqh";
    let v: Value = r.json(&[
        "--no-dense",
        "deep-search",
        padded,
        "retry request backoff",
        "--min-results",
        "1",
        "--return-all-variants",
    ]);
    let variants = v["variants"].as_array().unwrap();
    let (long, short) = (&variants[0], &variants[1]);
    assert!((long["best_sparse"].as_f64().unwrap() - short["best_sparse"].as_f64().unwrap()).abs() < 1e-4, "{v}");
    assert!(
        (long["sparse_threshold"].as_f64().unwrap() / short["sparse_threshold"].as_f64().unwrap() - 11.0 / 3.0).abs()
            < 1e-4,
        "{v}"
    );
    assert_eq!(long["strong"], false, "{v}");
    assert_eq!(short["strong"], true, "{v}");
    assert_eq!(v["chosen"], 2, "{v}"); // 1-based
    assert_eq!(v["results"][0]["path"], "src/retry.py", "{v}");
}

#[test]
fn a_file_with_two_matching_hits_gains_a_share_of_the_second() {
    let r = TestRepo::new();
    // alpha.py: two functions about the ledger; beta.py: one that says it more often.
    r.write("src/alpha.py", "def post(entry):\n    # ledger balance update\n    return entry\n\n\ndef close(day):\n    # ledger balance check\n    return day\n");
    r.write("src/beta.py", "def audit(book):\n    # ledger balance ledger totals ledger\n    return book\n");
    for i in 0..20 {
        r.write(&format!("src/other{i}.py"), &format!("def helper{i}(x):\n    return x + {i}\n"));
    }
    r.commit_all("init");
    let run = |share: &str| {
        std::fs::create_dir_all(r.file(".lynx")).unwrap();
        // Further chunks of a file are not discounted here: the share is what is measured.
        std::fs::write(r.file(".lynx/config.toml"), format!("[search]\nfile_evidence = {share}\nchunk_decay = 1.0\n"))
            .unwrap();
        let v: Value = r.json(&["--no-dense", "search", "ledger balance", "-k", "30"]);
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (format!("{}:{}", h["path"].as_str().unwrap(), h["start_line"]), h["score"].as_f64().unwrap()))
            .collect::<Vec<_>>()
    };
    let alone = run("0");
    let with = run("0.25");
    assert_eq!(alone.len(), 3, "{alone:?}");
    assert!(alone[0].0.starts_with("src/beta.py"), "{alone:?}");
    assert!(with[0].0.starts_with("src/alpha.py"), "{with:?}");
    // Each alpha hit gains a quarter of the other; beta, alone in its file, gains nothing.
    let s = |list: &[(String, f64)], key: &str| list.iter().find(|(k, _)| k == key).unwrap().1;
    let (a1, a2, b) = ("src/alpha.py:1", "src/alpha.py:6", "src/beta.py:1");
    assert!((s(&with, a1) - (s(&alone, a1) + 0.25 * s(&alone, a2))).abs() < 1e-4, "{alone:?} {with:?}");
    assert!((s(&with, a2) - (s(&alone, a2) + 0.25 * s(&alone, a1))).abs() < 1e-4, "{alone:?} {with:?}");
    assert!((s(&with, b) - s(&alone, b)).abs() < 1e-6);
    // Out of range is refused with the key named.
    std::fs::write(r.file(".lynx/config.toml"), "[search]\nfile_evidence = 2\n").unwrap();
    let out = r.lynx(&["--no-dense", "search", "ledger balance"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("search.file_evidence"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn files_rank_by_their_best_chunk_and_count_their_evidence() {
    let r = TestRepo::new();
    // a.py: two chunks about the query; b.py: one chunk, more focused; c.py: unrelated.
    r.write("a.py", "def parse_config(path):\n    \"\"\"Parse the config file.\"\"\"\n    return load(path)\n\n\ndef config_defaults():\n    \"\"\"Defaults when the config file has no value.\"\"\"\n    return {}\n");
    r.write("b.py", "def parse_config_file(path):\n    \"\"\"Parse config file: parse the config file and validate the config.\"\"\"\n    return validate(load(path))\n");
    r.write("c.py", "def unrelated():\n    return 42\n");
    r.commit_all("init");
    let chunks = r.json(&["--no-dense", "search", "parse config file", "-k", "50"]);
    let files = r.json(&["--no-dense", "search", "parse config file", "--files", "-k", "10"]);
    let list = files["files"].as_array().unwrap();
    assert!(files["results"].is_null() || files["results"].as_array().unwrap().is_empty());
    // Every file's score is its best chunk's score, and the count is its chunks among the hits.
    let hits = chunks["results"].as_array().unwrap();
    for f in list {
        let path = f["path"].as_str().unwrap();
        let mine: Vec<f64> = hits.iter().filter(|h| h["path"] == path).map(|h| h["score"].as_f64().unwrap()).collect();
        let best = mine.iter().cloned().fold(f64::MIN, f64::max);
        assert!((f["score"].as_f64().unwrap() - best).abs() < 1e-6, "{f} vs {mine:?}");
        assert_eq!(f["chunks"].as_u64().unwrap() as usize, mine.len(), "{f}");
    }
    // Best first, each file once, the order of the best chunks.
    let order: Vec<&str> = list.iter().map(|f| f["path"].as_str().unwrap()).collect();
    let mut first_seen: Vec<&str> = Vec::new();
    for h in hits {
        let p = h["path"].as_str().unwrap();
        if !first_seen.contains(&p) {
            first_seen.push(p);
        }
    }
    assert_eq!(order, first_seen);
    assert!(list.windows(2).all(|w| w[0]["score"].as_f64() >= w[1]["score"].as_f64()));
    assert!(!order.contains(&"c.py"));
}

#[test]
fn history_field_finds_files_by_their_commits_and_never_sees_later_ones() {
    let r = TestRepo::new();
    r.write("render.py", "def draw(canvas):\n    return canvas.fill()\n");
    r.write("parse.py", "def read(text):\n    return text.split()\n");
    let c1 = r.commit_all("init");
    r.write("render.py", "def draw(canvas):\n    canvas.pattern()\n    return canvas.fill()\n");
    let c2 = r.commit_all("Handle zebra stripes when drawing");
    r.write("parse.py", "def read(text):\n    return text.strip().split()\n");
    let c3 = r.commit_all("Trim input before splitting");
    let score = |rev: &str, q: &str| scores_at(&r, q, rev);
    // History is evidence for what the query matched, never a match of its own.
    assert!(score(&c3, "zebra stripes").is_empty());
    // Before the commit that mentions zebras nothing knows about them; from it on, its subject
    // adds to the file it changed.
    let q = "zebra stripes canvas";
    let before = score(&c1, q);
    let after = score(&c2, q);
    let render = |v: &[(String, f64)]| v.iter().find(|(p, _)| p == "render.py").map(|h| h.1).unwrap();
    // At c1 every answer equals the one with the history field off.
    let with = r.json(&["--no-dense", "search", "draw canvas fill", "--rev", &c1]);
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), "[search]\nhistory = 0\n").unwrap();
    let without = r.json(&["--no-dense", "search", "draw canvas fill", "--rev", &c1]);
    assert_eq!(with["results"], without["results"]);
    let off = score(&c2, q);
    assert!(render(&off) < render(&after), "off, the subject adds nothing: {off:?}");
    // At c1 the zebra commit does not exist yet: history on or off, the same answer.
    assert_eq!(score(&c1, q), before);
}

#[test]
fn recent_change_prior_follows_the_revision_and_never_sees_later_commits() {
    let r = TestRepo::new();
    // The root commit counts as no one's change (it adds everything).
    r.write("README.md", "notes\n");
    r.commit_all("root");
    // Two files the query matches exactly alike; they differ only in when they were added.
    r.write("alpha.py", "def ledger_alpha(rows):\n    return sum(rows)\n");
    let c1 = r.commit_all("init");
    r.write("beta.py", "def ledger_beta(rows):\n    return sum(rows)\n");
    let c2 = r.commit_all("second file");
    std::fs::create_dir_all(r.file(".lynx")).unwrap();
    std::fs::write(r.file(".lynx/config.toml"), "[search]\nrecency = 0.2\n").unwrap();
    let q = "ledger rows sum";
    let at = |rev: &str| scores_at(&r, q, rev);
    let before = at(&c2);
    let (alpha, beta) = (score_of(&before, "alpha.py"), score_of(&before, "beta.py"));
    // beta changed in the revision's own commit (×1.2), alpha one commit earlier.
    let want = (1.0 + 0.2) / (1.0 + 0.2 * 2f64.powf(-1.0 / 50.0));
    assert!((beta / alpha - want).abs() < 1e-4, "beta/alpha = {} (want {want})", beta / alpha);
    assert_eq!(at(&c1).len(), 1);
    // A later commit touching alpha changes the order at the new revision, not at c2.
    r.write("alpha.py", "def ledger_alpha(rows):\n    return sum(rows)\n\n\n");
    let c3 = r.commit_all("third");
    let after = at(&c3);
    assert!(score_of(&after, "alpha.py") > score_of(&after, "beta.py"), "{after:?}");
    assert_eq!(at(&c2), before, "a commit after the revision changed its answers");
    // The explanation names the prior with the factor the ranking used.
    let v: Value = r.json(&["--no-dense", "search", q, "--rev", &c2, "--explain"]);
    let hit = v["results"].as_array().unwrap().iter().find(|h| h["path"] == "beta.py").unwrap();
    let priors = hit["explain"]["priors"].as_array().unwrap();
    assert!(
        priors.iter().any(|p| p["prior"] == "changed recently" && (p["factor"].as_f64().unwrap() - 1.2).abs() < 1e-6),
        "{priors:?}"
    );
    // Off (the default), the two score alike.
    std::fs::remove_file(r.file(".lynx/config.toml")).unwrap();
    let off = at(&c2);
    assert_eq!(score_of(&off, "alpha.py"), score_of(&off, "beta.py"));
}

fn scores_at(r: &TestRepo, q: &str, rev: &str) -> Vec<(String, f64)> {
    let v: Value = r.json(&["--no-dense", "search", q, "--rev", rev]);
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["score"].as_f64().unwrap()))
        .collect()
}

#[test]
fn further_chunks_of_a_listed_file_weigh_less_so_the_first_hits_name_more_files() {
    let r = TestRepo::new();
    let f = |name: &str, n: usize| {
        format!(
            "def {name}_{n}(zebra):\n    \"\"\"zebra quagga zebra quagga stripes\"\"\"\n    return zebra + quagga\n\n\n"
        )
    };
    r.write("src/stripes.py", &(0..3).map(|n| f("stripe", n)).collect::<String>());
    r.write("src/other.py", "def lone(x):\n    \"\"\"zebra quagga zebra\"\"\"\n    return x\n");
    for i in 0..6 {
        r.write(&format!("src/filler{i}.py"), &format!("def filler{i}(x):\n    return x + {i}\n"));
    }
    r.commit_all("init");
    let run = |decay: Option<f64>| -> Vec<(String, f64, f64)> {
        match decay {
            Some(d) => std::fs::write(r.file(".lynx/config.toml"), format!("[search]\nchunk_decay = {d}\n")).unwrap(),
            None => {
                let _ = std::fs::remove_file(r.file(".lynx/config.toml"));
            }
        }
        let v: Value = r.json(&["--no-dense", "search", "zebra quagga", "-k", "4", "--explain"]);
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap().to_string(),
                    h["score"].as_f64().unwrap(),
                    h["explain"]["further_chunk"].as_f64().unwrap_or(1.0),
                )
            })
            .collect()
    };
    r.json(&["--no-dense", "index"]);
    let flat = run(Some(1.0));
    assert_eq!(
        flat.iter().take(3).map(|h| h.0.as_str()).collect::<Vec<_>>(),
        ["src/stripes.py"; 3],
        "without saturation one file fills the top: {flat:?}"
    );
    let sat = run(None);
    // The default: the second chunk of stripes.py weighs half, the third a quarter.
    assert_eq!(sat[0].0, "src/stripes.py");
    assert_eq!(sat[1].0, "src/other.py", "{sat:?}");
    let stripes: Vec<&(String, f64, f64)> = sat.iter().filter(|h| h.0 == "src/stripes.py").collect();
    assert_eq!(stripes.iter().map(|h| h.2).collect::<Vec<_>>(), [1.0, 0.5, 0.25], "{sat:?}");
    let flat_stripes: Vec<f64> = flat.iter().filter(|h| h.0 == "src/stripes.py").map(|h| h.1).collect();
    for (i, h) in stripes.iter().enumerate() {
        assert!(
            (h.1 - flat_stripes[i] * 0.5f64.powi(i as i32)).abs() < 1e-4,
            "score {} of chunk {i} is not {} × 0.5^{i}",
            h.1,
            flat_stripes[i]
        );
    }
}

#[test]
fn vendored_code_yields_to_the_repositorys_own_and_a_member_named_in_full_is_lifted() {
    let r = TestRepo::new();
    let body = "func Backoff(attempt int) time.Duration {\n\t// exponential backoff for retried requests\n\treturn time.Duration(1<<attempt) * time.Second\n}\n";
    r.write("internal/retry/backoff.go", &format!("package retry\n\n{body}"));
    r.write("vendor/github.com/acme/retry/backoff.go", &format!("package retry\n\n// vendored copy\n{body}"));
    r.write("queue/manager.go", "package queue\n\ntype QueueManager struct{ items []int }\n\nfunc (m *QueueManager) Append(x int) { m.items = append(m.items, x) }\n\nfunc (m *QueueManager) Len() int { return len(m.items) }\n");
    r.write(
        "queue/list.go",
        "package queue\n\n// Append adds to a list.\nfunc Append(list []int, x int) []int { return append(list, x) }\n",
    );
    r.commit_all("init");
    let hits = scores(&r, "exponential backoff retried requests");
    assert_eq!(hits[0].0, "internal/retry/backoff.go", "{hits:?}");
    let ratio =
        score_of(&hits, "vendor/github.com/acme/retry/backoff.go") / score_of(&hits, "internal/retry/backoff.go");
    assert!(ratio < 0.55, "the vendored copy is demoted: {hits:?}");
    // Asked about, it is not.
    let about = scores(&r, "exponential backoff retried requests vendored dependency");
    assert!(
        score_of(&about, "vendor/github.com/acme/retry/backoff.go") / score_of(&about, "internal/retry/backoff.go")
            > 0.8,
        "{about:?}"
    );
    // `QueueManager.Append`: the member itself first, not the type or another Append.
    let v: Value = r.json(&["--no-dense", "search", "QueueManager.Append"]);
    assert_eq!(v["results"][0]["symbol"], "QueueManager.Append", "{v}");
}

/// A definition that works with the asked-for things throughout outranks a one-line mention of
/// them: a chunk's length is what its code does, so BM25 normalises a chunk's text for length
/// only weakly (`bm25::TEXT_B`). With the usual normalisation (0.75) the one-liner came first:
/// tf 4 in 150 tokens scored 0.80 of tf 1 in 8 tokens' 1.33, per term.
#[test]
fn a_definition_using_the_words_throughout_outranks_a_one_line_mention() {
    let r = TestRepo::new();
    let mut long = String::from("def settle(book, day):\n");
    for i in 0..12 {
        long.push_str(&format!("    total_{i} = book.rows[{i}] * day.rate + book.fees[{i}] - day.offset\n"));
        if i % 3 == 0 {
            long.push_str(&format!("    ledger.balance_{i} = ledger.carry(total_{i})  # ledger balance\n"));
        }
    }
    long.push_str("    return book\n");
    r.write("src/settle.py", &long);
    r.write("src/notes.py", "def note(x):\n    return x  # ledger balance\n");
    for i in 0..20 {
        r.write(&format!("src/other{i}.py"), &format!("def helper{i}(x):\n    return x + {i}\n"));
    }
    r.commit_all("init");
    let hits = scores(&r, "ledger balance");
    assert_eq!(hits[0].0, "src/settle.py", "{hits:?}");
    assert!(score_of(&hits, "src/notes.py") < hits[0].1, "{hits:?}");
}
