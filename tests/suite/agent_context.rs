//! What an agent with a small context window relies on: pages instead of a bigger `k`,
//! explanations of a ranking, language filters, context slices within a token budget.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

fn pages(r: &TestRepo, args: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let mut a: Vec<&str> = args.to_vec();
        if let Some(c) = &cursor {
            a.extend(["--cursor", c.as_str()]);
        }
        let v = r.json(&a);
        out.push(v.clone());
        match v["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
    }
    panic!("paging did not end");
}

fn items(pages: &[Value], key: &str, id: impl Fn(&Value) -> String) -> Vec<String> {
    pages.iter().flat_map(|p| p[key].as_array().unwrap().iter().map(&id).collect::<Vec<_>>()).collect()
}

#[test]
fn cursors_page_through_every_item_once() {
    let r = TestRepo::new();
    // 40 functions that all call `shared` and all mention "ledger".
    r.write("lib/shared.py", "def shared(x):\n    return x\n");
    for i in 0..40 {
        r.write(&format!("app/m{i:02}.py"), &format!("from lib.shared import shared\n\n\ndef use_{i}(ledger):\n    \"\"\"Post entry {i} to the ledger.\"\"\"\n    return shared(ledger)\n"));
    }
    r.commit_all("many");

    let id = |h: &Value| format!("{}:{}", h["path"].as_str().unwrap(), h["start_line"]);
    let all = r.json(&["--no-dense", "search", "ledger entry", "-k", "30"]);
    let all: Vec<String> = all["results"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(all.len(), 30);
    let paged = pages(&r, &["--no-dense", "search", "ledger entry", "-k", "7"]);
    assert!(paged.len() >= 5, "several pages: {}", paged.len());
    let got = items(&paged, "results", id);
    assert_eq!(got.len(), got.iter().collect::<BTreeSet<_>>().len(), "no item twice: {got:?}");
    assert!(got.len() >= 40, "every candidate once: {}", got.len());
    // The pages are the ranking cut in slices: same order as one big answer at the same depth.
    let one = r.json(&["--no-dense", "search", "ledger entry", "-k", "7"]);
    assert_eq!(one["results"][0], paged[0]["results"][0]);
    assert!(paged[1]["note"].as_str().unwrap_or("").contains("results 8 and after"), "{}", paged[1]);

    // find_usages and graph callers page the same way.
    let usages = pages(&r, &["--no-dense", "find-usages", "shared", "-k", "9"]);
    let got = items(&usages, "results", |u| format!("{}:{}", u["path"].as_str().unwrap(), u["line"]));
    assert_eq!(got.len(), got.iter().collect::<BTreeSet<_>>().len(), "{got:?}");
    assert!(got.len() >= 40, "{}", got.len());
    let callers = pages(&r, &["--no-dense", "graph-query", "--op", "callers", "--symbol", "shared", "-k", "6"]);
    let got = items(&callers, "results", |l| l["node"]["name"].as_str().unwrap().to_string());
    let want: BTreeSet<String> = (0..40).map(|i| format!("use_{i}")).collect();
    assert_eq!(got.iter().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(got.len(), 40);
    // The text says how to continue.
    let t = r.text(&["--no-dense", "graph-query", "--op", "callers", "--symbol", "shared", "-k", "6"]);
    assert!(t.contains("more: --cursor p6-"), "{t}");

    // A cursor is bound to its question and to the state of the view.
    let c = paged[0]["next_cursor"].as_str().unwrap().to_string();
    let out = r.lynx(&["--no-dense", "--json", "search", "another question", "--cursor", &c]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("another question or another state"));
    r.write("app/new.py", "def fresh(ledger):\n    return ledger\n");
    let out = r.lynx(&["--no-dense", "--json", "search", "ledger entry", "-k", "7", "--cursor", &c]);
    assert_eq!(out.status.code(), Some(2), "the view changed: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn explain_says_why_a_hit_ranked() {
    let r = TestRepo::new();
    r.write("src/retry.py", "def retry_with_backoff(call, attempts):\n    \"\"\"Retry a call with exponential backoff.\"\"\"\n    return call()\n");
    r.write(
        "tests/test_retry.py",
        "def test_retry_with_backoff():\n    assert retry_with_backoff(lambda: 1, 3) == 1\n",
    );
    r.write("docs/retry.md", "# Retry\n\nCalls are retried with backoff.\n");
    r.commit_all("retry");
    let v = r.json(&["--no-dense", "search", "retry backoff", "--explain"]);
    let hits = v["results"].as_array().unwrap();
    let src = hits.iter().find(|h| h["path"] == "src/retry.py").expect("source hit");
    let e = &src["explain"];
    assert_eq!(e["fusion"], "sparse", "{e}");
    let terms = e["sparse"]["terms"].as_array().unwrap();
    let fields: BTreeSet<(&str, &str)> =
        terms.iter().map(|t| (t["term"].as_str().unwrap(), t["field"].as_str().unwrap())).collect();
    assert!(
        fields.contains(&("retry", "text"))
            && fields.contains(&("backoff", "symbol"))
            && fields.contains(&("retry", "path")),
        "{fields:?}"
    );
    // The parts add up: BM25 is the sum of its term scores, the score is (retrieval + boost) ×
    // priors + file evidence; the best hit of a file carries its file's coherence lift.
    assert!(e["boost"].as_f64().unwrap_or(0.0) > 0.0, "{e}");
    let sum: f64 = terms.iter().map(|t| t["score"].as_f64().unwrap()).sum();
    assert!((sum - e["sparse"]["bm25"].as_f64().unwrap()).abs() < 1e-3, "{e}");
    let test = hits.iter().find(|h| h["path"] == "tests/test_retry.py").expect("test hit");
    let priors = test["explain"]["priors"].as_array().unwrap();
    assert!(
        priors.iter().any(|p| p["prior"] == "test file" && p["factor"].as_f64().unwrap() < 1.0),
        "{}",
        test["explain"]
    );
    for h in hits {
        let e = &h["explain"];
        let product: f64 = e["priors"].as_array().unwrap().iter().map(|p| p["factor"].as_f64().unwrap()).product();
        let boost = e["boost"].as_f64().unwrap_or(0.0);
        let decay = e["further_chunk"].as_f64().unwrap_or(1.0);
        let rebuilt =
            ((e["retrieval_score"].as_f64().unwrap() + boost) * product + e["file_evidence"].as_f64().unwrap()) * decay;
        assert!((rebuilt - h["score"].as_f64().unwrap()).abs() < 1e-3, "{h}");
    }
    let t = r.text(&["--no-dense", "search", "retry backoff", "--explain"]);
    assert!(t.contains("why: bm25 #") && t.contains("retry@text") && t.contains("test file"), "{t}");
}

#[test]
fn language_filter_keeps_one_language() {
    let r = TestRepo::new();
    r.write("a/parse.py", "def parse_invoice(text):\n    return text\n");
    r.write("b/Parse.cs", "class Invoice { void ParseInvoice(string text) {} }\n");
    r.write("c/parse.ts", "export function parseInvoice(text: string) { return text; }\n");
    r.write("d/parse.tsx", "export function ParseInvoiceView() { return null; }\n");
    r.commit_all("langs");
    let paths = |lang: &str| -> BTreeSet<String> {
        r.search_paths(&["--no-dense", "parse invoice", "--language", lang]).into_iter().collect()
    };
    assert_eq!(paths("python"), BTreeSet::from(["a/parse.py".to_string()]));
    assert_eq!(paths("c#"), BTreeSet::from(["b/Parse.cs".to_string()]));
    assert_eq!(paths("ts"), BTreeSet::from(["c/parse.ts".to_string(), "d/parse.tsx".to_string()]));
    let v = r.json(&["search", "--exact", "Invoice", "--language", "csharp"]);
    assert_eq!(v["files"], serde_json::json!(["b/Parse.cs"]), "{v}");
    let out = r.lynx(&["--json", "search", "x", "--language", "klingon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("unknown language `klingon`"));
}

fn estimate(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

#[test]
fn context_slices_fit_the_budget_exactly() {
    let r = TestRepo::new();
    r.write(
        "shop/cart.py",
        "from shop.money import round_cents\n\n\nclass Cart:\n    \"\"\"A shopping cart.\"\"\"\n\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        \"\"\"Sum of the items, rounded to cents.\"\"\"\n        s = 0\n        for price, qty in self.items:\n            s += price * qty\n        return round_cents(s)\n",
    );
    r.write(
        "shop/money.py",
        "def round_cents(x):\n    \"\"\"Round to two decimals, half up.\"\"\"\n    return int(x * 100 + 0.5) / 100\n",
    );
    r.write("shop/checkout.py", "from shop.cart import Cart\n\n\ndef checkout(cart: Cart):\n    amount = cart.total()\n    return {'amount': amount}\n\n\ndef receipt(cart: Cart):\n    return 'total: %s' % cart.total()\n");
    r.commit_all("shop");

    let v = r.json(&["--no-dense", "context", "Cart.total", "--budget", "2000"]);
    let slices = v["slices"].as_array().unwrap();
    assert_eq!(slices[0]["role"], "definition");
    assert_eq!(
        (slices[0]["start_line"].as_u64(), slices[0]["end_line"].as_u64()),
        (Some(7), Some(15)),
        "3 lines around 10-15: {v}"
    );
    let roles: BTreeSet<(&str, &str)> =
        slices.iter().map(|s| (s["role"].as_str().unwrap(), s["name"].as_str().unwrap())).collect();
    for want in [("type", "Cart"), ("callee", "round_cents"), ("caller", "checkout"), ("caller", "receipt")] {
        assert!(roles.contains(&want), "{want:?} in {roles:?}");
    }
    let check = |v: &Value| {
        let budget = v["budget"].as_u64().unwrap() as usize;
        let used = v["used"].as_u64().unwrap() as usize;
        let slices = v["slices"].as_array().unwrap();
        let sum: usize = slices.iter().map(|s| s["tokens"].as_u64().unwrap() as usize).sum();
        assert_eq!(sum, used);
        for s in slices {
            assert_eq!(estimate(s["text"].as_str().unwrap()), s["tokens"].as_u64().unwrap() as usize, "{s}");
        }
        assert!(used <= budget, "{used} > {budget}");
        // Greedy: nothing omitted would have fitted in what is left.
        for o in v["omitted"].as_array().unwrap() {
            assert!(o["tokens"].as_u64().unwrap() as usize > budget - used, "{o} fits in {}", budget - used);
        }
    };
    check(&v);
    // A tight budget keeps the definition first and drops neighbours it cannot hold whole.
    let def_tokens = slices[0]["tokens"].as_u64().unwrap();
    let tight = def_tokens + 12;
    let v = r.json(&["--no-dense", "context", "Cart.total", "--budget", &tight.to_string()]);
    check(&v);
    assert_eq!(v["slices"][0]["role"], "definition");
    assert!(!v["omitted"].as_array().unwrap().is_empty(), "{v}");
    // Smaller than the definition: the definition is cut from the bottom, within budget.
    let v = r.json(&["--no-dense", "context", "Cart.total", "--budget", "40"]);
    check(&v);
    assert_eq!(v["slices"][0]["truncated"], true, "{v}");
    assert!(v["slices"][0]["end_line"].as_u64().unwrap() < 15);
    // The text is the slices as they would be pasted.
    let t = r.text(&["--no-dense", "context", "Cart.total", "--budget", "2000"]);
    assert!(t.contains("--- shop/cart.py:7-15 definition Cart.total") && t.contains("return round_cents(s)"), "{t}");
    let out = r.lynx(&["--json", "--no-dense", "context", "Cart.total", "--budget", "3"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn synonyms_file_and_suggestions_when_nothing_matches() {
    let r = TestRepo::new();
    r.write("auth/session.py", "def authenticate_user(name, secret):\n    \"\"\"Check the secret and open a session.\"\"\"\n    return name\n\n\ndef reconcile_ledger(book):\n    return book\n");
    r.write("docs/notes.md", "# Notes\n\nNothing about it here.\n");
    r.commit_all("auth");
    let v = r.json(&["--no-dense", "search", "login"]);
    assert!(v["results"].as_array().unwrap().is_empty(), "{v}");
    // The repository's synonyms: `login` also searches `authenticate`.
    std::fs::create_dir_all(r.path().join(".lynx")).unwrap();
    std::fs::write(r.path().join(".lynx/synonyms.txt"), "# team vocabulary\nlogin, authenticate, sign in\n").unwrap();
    let v = r.json(&["--no-dense", "search", "login", "--explain"]);
    assert_eq!(v["results"][0]["path"], "auth/session.py", "{v}");
    let terms: Vec<&str> = v["results"][0]["explain"]["sparse"]["terms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["term"].as_str().unwrap())
        .collect();
    assert!(terms.contains(&"authenticate"), "{terms:?}");
    // Nothing matches a misspelt identifier: the nearest ones are suggested.
    let v = r.json(&["--no-dense", "search", "reconcle_ledgr"]);
    assert!(v["results"].as_array().unwrap().is_empty());
    assert!(v["suggestions"].as_array().unwrap().iter().any(|s| s == "reconcile_ledger"), "{v}");
    let t = r.text(&["--no-dense", "search", "reconcle_ledgr"]);
    assert!(t.contains("did you mean: reconcile_ledger"), "{t}");
}

/// `repo_overview` names the frameworks a manifest declares, never ones a file or identifier
/// happens to contain (scrapy's `reactor` is no React), and lists the project's own entry
/// points before its examples'.
#[test]
fn repo_overview_reads_frameworks_from_manifests_and_ranks_own_entry_points_first() {
    let r = TestRepo::new();
    r.write(
        "pyproject.toml",
        "[project]\nname = \"crawler\"\ndependencies = [\"lxml>=4\"]\n\n[project.optional-dependencies]\ntest = [\"pytest>=7\"]\n\n[project.scripts]\nreactor = \"crawler.reactor:main\"\nexpression = \"crawler.expression:main\"\n",
    );
    r.write("crawler/reactor.py", "def install_reactor():\n    return 'reactor'\n");
    r.write("crawler/expression.py", "def express(x):\n    return x\n");
    r.write("crawler/__main__.py", "from crawler.reactor import install_reactor\ninstall_reactor()\n");
    r.commit_all("python");
    let o = r.json(&["--no-dense", "repo-overview"]);
    let frameworks: Vec<&str> = o["frameworks"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    assert_eq!(frameworks, ["pytest"], "{o}");
    assert!(o["commands"]["test"].as_array().unwrap().iter().any(|c| c == "pytest"), "{o}");

    let r = TestRepo::new();
    r.write("package.json", r#"{"name": "api", "dependencies": {"express": "^4"}}"#);
    r.write("src/server/index.js", "require('express')().listen(3000);\n");
    r.write("examples/basic/package.json", r#"{"name": "demo", "dependencies": {"react": "^18"}}"#);
    r.write("examples/basic/index.js", "console.log('demo');\n");
    r.write("docs/site/index.js", "console.log('docs');\n");
    r.commit_all("js");
    let o = r.json(&["--no-dense", "repo-overview"]);
    let entries: Vec<&str> = o["entry_points"].as_array().unwrap().iter().filter_map(|e| e.as_str()).collect();
    assert_eq!(entries.first(), Some(&"src/server/index.js"), "{o}");
    assert!(entries.contains(&"examples/basic/index.js"), "{o}");
    let frameworks: Vec<&str> = o["frameworks"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    assert_eq!(frameworks, ["Express"], "the example's React is not the project's: {o}");
    assert_eq!(o["manifests"][0], "package.json", "{o}");
}
