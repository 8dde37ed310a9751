//! The code graph on small multi-file projects with hand-written expected edges.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

fn names(v: &serde_json::Value) -> BTreeSet<String> {
    v["results"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap().to_string()).collect()
}

fn query(r: &TestRepo, op: &str, symbol: &str) -> serde_json::Value {
    r.json(&["--no-dense", "graph", "query", "--op", op, "--symbol", symbol])
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// (caller, confidence) of `graph query --op callers --symbol SYM`, in the answer's order.
fn callers_with_confidence(r: &TestRepo, sym: &str) -> Vec<(String, String)> {
    let v = r.json(&["--no-dense", "graph", "query", "--op", "callers", "--symbol", sym]);
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["node"]["name"].as_str().unwrap().to_string(), l["confidence"].as_str().unwrap().to_string()))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// What `path` imports: (files of the view, names of external modules).
fn imports_of(r: &TestRepo, path: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let v = r.json(&["--no-dense", "graph", "query", "imports", path]);
    let mut local = BTreeSet::new();
    let mut external = BTreeSet::new();
    for l in v["results"].as_array().unwrap().iter().filter(|l| l["relation"] == "imports") {
        match l["node"]["path"].as_str() {
            Some(p) => local.insert(p.to_string()),
            None => external.insert(l["node"]["name"].as_str().unwrap().to_string()),
        };
    }
    (local, external)
}

fn confidence_of(v: &serde_json::Value, name: &str) -> String {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["node"]["name"] == name)
        .map(|l| l["confidence"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn python_calls_bases_imports_ambiguity_and_cycles() {
    let r = TestRepo::new();
    r.write("pkg/__init__.py", "");
    r.write("pkg/shapes.py", "class Shape:\n    def area(self):\n        return 0\n\n\nclass Circle(Shape):\n    def area(self):\n        return helper(2)\n\n\ndef helper(x):\n    return x * 2\n");
    r.write("pkg/util.py", "def helper(x):\n    return x\n\n\ndef format_area(s):\n    return str(s)\n");
    r.write("pkg/main.py", "from pkg.util import helper\nfrom pkg.shapes import Circle\n\n\ndef main():\n    c = Circle()\n    print(helper(c.area()))\n    format_area(1)\n");
    r.write("pkg/other.py", "def use_helper():\n    return helper(3)\n");
    r.write("pkg/cycle.py", "def ping(n):\n    return pong(n - 1)\n\n\ndef pong(n):\n    return ping(n)\n");
    r.commit_all("py");

    // Import-disambiguated: main imports util.helper, so only util's helper gets that edge.
    let util = query(&r, "callers", "pkg/util.py:helper");
    assert_eq!(names(&util), set(&["main", "use_helper"]));
    assert_eq!(confidence_of(&util, "main"), "resolved");
    // Ambiguous: other.py calls `helper` with no import: an edge to each candidate.
    assert_eq!(confidence_of(&util, "use_helper"), "ambiguous");
    let shapes = query(&r, "callers", "pkg/shapes.py:helper");
    assert_eq!(names(&shapes), set(&["Circle.area", "use_helper"]));
    assert_eq!(confidence_of(&shapes, "Circle.area"), "extracted");
    // Callees of main: the constructor, the imported helper, the method through `c = Circle()`.
    let callees = query(&r, "callees", "main");
    let got = names(&callees);
    for want in ["Circle", "helper", "Circle.area", "format_area", "print"] {
        assert!(got.contains(want), "{want} missing from {got:?}");
    }
    assert!(!got.contains("Shape.area"), "receiver type narrows to Circle.area: {got:?}");
    assert_eq!(names(&query(&r, "subclasses", "Shape")), set(&["Circle"]));
    assert_eq!(names(&query(&r, "superclasses", "Circle")), set(&["Shape"]));
    // The README's form, operation and symbol as words, answers the same as the flags.
    assert_eq!(
        r.json(&["--no-dense", "graph", "query", "superclasses", "Circle"]),
        query(&r, "superclasses", "Circle")
    );
    let imports = query(&r, "imports", "pkg/main.py");
    let got = names(&imports);
    assert!(got.contains("pkg/util.py") && got.contains("pkg/shapes.py"), "{got:?}");
    // A cycle: traversals terminate and report each node once.
    let c = r.json(&["--no-dense", "graph", "query", "--op", "callers", "--symbol", "ping", "--depth", "10"]);
    assert_eq!(names(&c), set(&["pong"]));
    let i = r.json(&["--no-dense", "impact", "ping", "--max-depth", "10"]);
    assert_eq!(i["results"].as_array().unwrap().len(), 1, "{i}");
    // Unknown symbols say so.
    let none = query(&r, "callers", "does_not_exist");
    assert_eq!(none["matched"], false);
}

#[test]
fn typescript_rust_go_java_csharp_edges() {
    let r = TestRepo::new();
    // TypeScript: relative imports, extends/implements, a method through `new`.
    r.write("ts/base.ts", "export interface Shape { area(): number; }\nexport class Base { describe(): string { return 'b'; } }\nexport function helper(x: number): number { return x; }\n");
    r.write("ts/circle.ts", "import { Base, Shape, helper } from './base';\n\nexport class Circle extends Base implements Shape {\n  area(): number {\n    return helper(3);\n  }\n}\n\nexport function make(): number {\n  const c = new Circle();\n  return c.area();\n}\n");
    // Rust: a trait impl, a method call through `Point::new`.
    r.write("rs/src/geo.rs", "pub trait Area { fn area(&self) -> f64; }\npub struct Point { x: f64 }\nimpl Point {\n    pub fn new(x: f64) -> Self { Point { x } }\n    pub fn norm(&self) -> f64 { self.x.abs() }\n}\nimpl Area for Point {\n    fn area(&self) -> f64 { self.norm() }\n}\n");
    r.write("rs/src/main.rs", "mod geo;\nuse crate::geo::Point;\n\nfn main() {\n    let p = Point::new(1.0);\n    println!(\"{}\", p.norm());\n}\n");
    // Go: methods on a receiver type across files of one package.
    r.write("go/geo/point.go", "package geo\n\ntype Point struct{ X float64 }\n\nfunc (p *Point) Norm() float64 { return p.X }\n\nfunc NewPoint(x float64) *Point { return &Point{X: x} }\n");
    r.write("go/geo/use.go", "package geo\n\nfunc Use() float64 {\n\tp := NewPoint(2)\n\treturn p.Norm()\n}\n");
    // Java: extends + implements, a static call.
    r.write("java/com/ex/Shape.java", "package com.ex;\npublic interface Shape { double area(); }\n");
    r.write(
        "java/com/ex/Base.java",
        "package com.ex;\npublic class Base { protected double scale() { return 1.0; } }\n",
    );
    r.write("java/com/ex/Circle.java", "package com.ex;\nimport com.ex.util.MathUtil;\npublic class Circle extends Base implements Shape {\n    public double area() { return MathUtil.square(scale()); }\n}\n");
    r.write(
        "java/com/ex/util/MathUtil.java",
        "package com.ex.util;\npublic class MathUtil { public static double square(double x) { return x * x; } }\n",
    );
    // C#: base list, a call through a typed local.
    r.write("cs/Enemy.cs", "namespace Game {\n  public interface IDamageable { void TakeDamage(int a); }\n  public class Unit { }\n  public class Enemy : Unit, IDamageable {\n    public void TakeDamage(int a) { }\n  }\n  public class Arena {\n    public void Fight() {\n      Enemy e = new Enemy();\n      e.TakeDamage(3);\n    }\n  }\n}\n");
    r.commit_all("multi");

    assert_eq!(names(&query(&r, "callers", "ts/base.ts:helper")), set(&["Circle.area"]));
    let sup = query(&r, "superclasses", "ts/circle.ts:Circle");
    assert_eq!(names(&sup), set(&["Base", "Shape"]));
    let rels: BTreeSet<String> =
        sup["results"].as_array().unwrap().iter().map(|l| l["relation"].as_str().unwrap().to_string()).collect();
    assert_eq!(rels, set(&["extends", "implements"]));
    assert!(names(&query(&r, "callees", "make")).contains("Circle.area"));

    assert_eq!(names(&query(&r, "callers", "Point.norm")), set(&["Point.area", "main"]));
    assert_eq!(names(&query(&r, "subclasses", "Area")), set(&["Point"]));

    assert_eq!(names(&query(&r, "callers", "Point.Norm")), set(&["Use"]));
    assert_eq!(names(&query(&r, "callers", "NewPoint")), set(&["Use"]));

    assert_eq!(names(&query(&r, "callers", "MathUtil.square")), set(&["Circle.area"]));
    assert_eq!(names(&query(&r, "callers", "Base.scale")), set(&["Circle.area"]));
    assert_eq!(names(&query(&r, "superclasses", "java/com/ex/Circle.java:Circle")), set(&["Base", "Shape"]));

    assert_eq!(names(&query(&r, "callers", "Game.Enemy.TakeDamage")), set(&["Game.Arena.Fight"]));
    let sup = query(&r, "superclasses", "Game.Enemy");
    assert_eq!(names(&sup), set(&["Game.Unit", "Game.IDamageable"]));
    assert_eq!(sup["results"][0]["relation"], "extends_or_implements");
}

#[test]
fn renamed_function_old_view_answers_old_name_and_graph_is_reproducible() {
    let r = TestRepo::new();
    r.write("a.py", "def old_name():\n    return 1\n\n\ndef caller():\n    return old_name()\n");
    let first = r.commit_all("first");
    r.write("a.py", "def new_name():\n    return 1\n\n\ndef caller():\n    return new_name()\n");
    r.write("b.py", "def extra():\n    return 2\n");
    r.commit_all("rename");
    let at = |rev: &str, sym: &str| {
        r.json(&["--no-dense", "graph", "query", "--op", "callers", "--symbol", sym, "--rev", rev])
    };
    assert_eq!(names(&at(&first, "old_name")), set(&["caller"]));
    assert_eq!(at(&first, "new_name")["matched"], false);
    assert_eq!(names(&at("HEAD", "new_name")), set(&["caller"]));
    assert_eq!(at("HEAD", "old_name")["matched"], false);

    // The graph of a view is the same built cold or after indexing other revisions first.
    let status_at =
        |repo: &TestRepo, rev: &str| repo.json(&["--no-dense", "graph", "status", "--rev", rev])["stats"].clone();
    let cold = TestRepo::new();
    cold.write("a.py", "def old_name():\n    return 1\n\n\ndef caller():\n    return old_name()\n");
    cold.commit_all("first");
    cold.write("a.py", "def new_name():\n    return 1\n\n\ndef caller():\n    return new_name()\n");
    cold.write("b.py", "def extra():\n    return 2\n");
    cold.commit_all("rename");
    assert_eq!(status_at(&r, "HEAD"), status_at(&cold, "HEAD"));
    let callers_cold = cold.json(&["--no-dense", "graph", "query", "--op", "callers", "--symbol", "new_name"]);
    assert_eq!(names(&callers_cold), names(&at("HEAD", "new_name")));
}

#[test]
fn navigation_operations() {
    let r = TestRepo::new();
    r.write("src/calc.py", "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    s = 0\n    for x in xs:\n        s = add(s, x)\n    return s\n");
    r.write("tests/test_calc.py", "from src.calc import add, total\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n");
    r.write(
        "src/report.py",
        "from src.calc import total\n\n\ndef report(xs):\n    # uses add indirectly\n    return 'sum=%d' % total(xs)\n",
    );
    r.commit_all("calc");
    let d = r.json(&["--no-dense", "find-definition", "add"]);
    assert_eq!(d["matched"], true);
    assert_eq!(d["results"][0]["path"], "src/calc.py");
    assert_eq!(d["results"][0]["start_line"], 1);
    let d = r.json(&["--no-dense", "find-definition", "nonexistent_zzz"]);
    assert_eq!(d["matched"], false);

    let u = r.json(&["--no-dense", "find-usages", "add"]);
    let origins: BTreeSet<(String, String)> = u["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["symbol"].as_str().unwrap().to_string(), x["origin"].as_str().unwrap().to_string()))
        .collect();
    assert!(origins.contains(&("total".into(), "graph".into())), "{origins:?}");
    assert!(origins.contains(&("test_add".into(), "graph".into())), "{origins:?}");
    // The comment in report() mentions `add`: a lexical reference, tagged as such.
    assert!(origins.contains(&("report".into(), "lexical".into())), "{origins:?}");

    let t = r.json(&["--no-dense", "find-tests-for", "total"]);
    let tests: BTreeSet<String> =
        t["results"].as_array().unwrap().iter().filter_map(|x| x["symbol"].as_str().map(String::from)).collect();
    assert!(tests.contains("test_total"), "{t}");
    let files: BTreeSet<String> =
        t["results"].as_array().unwrap().iter().map(|x| x["path"].as_str().unwrap().to_string()).collect();
    assert!(files.contains("tests/test_calc.py"));

    // add is reached from report through total: depth 2, and both tests need re-running.
    let i = r.json(&["--no-dense", "impact", "add", "--max-depth", "3"]);
    let depth_of = |name: &str| {
        i["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["node"]["name"] == name)
            .map(|l| l["depth"].as_u64().unwrap())
    };
    assert_eq!(depth_of("total"), Some(1));
    assert_eq!(depth_of("report"), Some(2));
    let tests: BTreeSet<String> =
        i["tests"].as_array().unwrap().iter().filter_map(|x| x["symbol"].as_str().map(String::from)).collect();
    assert!(tests.contains("test_add") && tests.contains("test_total"), "{i}");

    let s = r.json(&["--no-dense", "describe-symbol", "total"]);
    assert_eq!(names(&serde_json::json!({"results": s["callees"]})), set(&["add"]));
    assert!(names(&serde_json::json!({"results": s["callers"]})).contains("report"));

    let m = r.json(&["--no-dense", "module-summary", "src/calc.py"]);
    assert_eq!(m["definitions"].as_array().unwrap().len(), 2);
    let deps: BTreeSet<String> =
        m["dependents"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap().to_string()).collect();
    assert!(deps.contains("src/report.py") && deps.contains("tests/test_calc.py"), "{deps:?}");
    assert_eq!(m["tests"][0], "tests/test_calc.py");

    let o = r.json(&["--no-dense", "repo-overview"]);
    assert_eq!(o["languages"][0][0], "python");

    let ov = r.json(&["--no-dense", "graph", "query", "--op", "overview"]);
    assert_eq!(ov["hubs"][0]["name"], "total", "{ov}");
    let st = r.json(&["--no-dense", "graph", "query", "--op", "status"]);
    assert_eq!(st["stats"]["by_language"]["python"], 5);
    let sp =
        r.json(&["--no-dense", "graph", "query", "--op", "shortest_path", "--symbol", "report", "--target", "add"]);
    assert_eq!(sp["found"], true);
    assert_eq!(sp["path"].as_array().unwrap().len(), 3, "{sp}");
    // Edges are followed in their direction; each step names the edge that leads into it.
    let vias: Vec<&Value> = sp["path"].as_array().unwrap().iter().map(|s| &s["via"]).collect();
    assert_eq!(vias, [&Value::Null, &json!("calls"), &json!("calls")], "{sp}");
    assert_eq!(sp["direction"], "symbol_to_target");
    let back =
        r.json(&["--no-dense", "graph", "query", "--op", "shortest_path", "--symbol", "add", "--target", "report"]);
    assert_eq!((back["found"].as_bool(), back["direction"].as_str()), (Some(true), Some("target_to_symbol")), "{back}");
    assert_eq!(back["path"][0]["node"]["name"], "report", "the path runs from report down to add: {back}");
    let sc = r.json(&["--no-dense", "graph", "query", "--op", "surprising_connections"]);
    assert!(!sc["results"].as_array().unwrap().is_empty());
    let nb = r.json(&[
        "--no-dense",
        "graph",
        "query",
        "--op",
        "neighbors",
        "--symbol",
        "total",
        "--relation",
        "calls",
        "--depth",
        "1",
    ]);
    assert_eq!(names(&nb), set(&["add", "report", "test_total"]));
}

#[test]
fn export_graph_html_renders_offline_in_chromium() {
    let r = TestRepo::new();
    r.write("a.py", "def leaf():\n    return 1\n\n\ndef mid():\n    return leaf()\n\n\ndef top():\n    return mid()\n");
    r.commit_all("x");
    let out = r.file("report.html");
    let v = r.json(&["--no-dense", "graph", "export", "--symbol", "leaf", "--out", out.to_str().unwrap()]);
    assert_eq!(v["nodes"], 3, "{v}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("\"name\":\"leaf\""), "the data is embedded");
    // Offline: no URL is fetched; the SVG namespace is a name, not a download.
    let rest = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!rest.contains("http://") && !rest.contains("https://"), "no external resource in the export");
    assert!(!html.contains("<script src"), "must be self-contained");
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|b| std::process::Command::new("which").arg(b).output().is_ok_and(|o| o.status.success()));
    if !prerequisite("chromium", chromium.is_some(), "apt-get install chromium; the HTML was checked statically only") {
        return;
    }
    let chromium = chromium.unwrap();
    let profile = tempfile::tempdir().unwrap();
    let dom = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--virtual-time-budget=3000", "--dump-dom"])
        .arg(format!("file://{}", out.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    for name in ["leaf", "mid", "top"] {
        assert!(dom.contains(&format!("data-name=\"{name}\"")), "node {name} not rendered: {dom}");
    }
    assert!(dom.contains("<circle"), "no SVG nodes drawn");
}

/// Headless Chromium's DOM of `url` after its scripts ran (None when no browser: skipped unless
/// LYNX_REQUIRE_CHROMIUM=1).
fn rendered_dom(url: &str, size: &str) -> Option<String> {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|b| std::process::Command::new("which").arg(b).output().is_ok_and(|o| o.status.success()));
    if !prerequisite("chromium", chromium.is_some(), "apt-get install chromium; the page was checked statically only") {
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium.unwrap())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={size}"))
        .args(["--virtual-time-budget=3000", "--dump-dom"])
        .arg(url)
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn body_attr(dom: &str, name: &str) -> Option<String> {
    let body = &dom[dom.find("<body")?..];
    let tag = &body[..body.find('>')?];
    let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
    Some(tag[at..at + tag[at..].find('"')?].to_string())
}

#[test]
fn graph_explorer_fits_a_150_node_module_and_expands_on_click() {
    let r = TestRepo::new();
    // A module of 149 functions (150 nodes with its file), each calling the next; one caller
    // from another file, one step beyond the module's view.
    let big: String = (0..149).map(|i| format!("def f{i}():\n    return f{}()\n\n\n", (i + 1) % 149)).collect();
    r.write("big.py", &big);
    r.write("other.py", "def caller_of_f0():\n    return f0()\n");
    r.commit_all("x");
    let out = r.file("big.html");
    let v = r.json(&["--no-dense", "graph", "export", "--module", "big.py", "--out", out.to_str().unwrap()]);
    assert_eq!(v["nodes"], 150, "{v}");
    assert!(v["expandable"].as_u64().unwrap() >= 1, "{v}");
    let url = format!("file://{}", out.display());
    let Some(dom) = rendered_dom(&url, "1280,800") else { return };
    assert_eq!(body_attr(&dom, "data-nodes-shown").as_deref(), Some("150"), "{}", &dom[..dom.len().min(3000)]);
    // What the page measures of itself in the browser: drawn nodes (circle and label boxes)
    // outside the drawing, the smallest label in screen pixels, how many labels are drawn.
    let readable = |dom: &str, what: &str, min_labels: usize| {
        let head = &dom[..dom.len().min(600)];
        assert_eq!(body_attr(dom, "data-offscreen").as_deref(), Some("0"), "{what}: every node inside: {head}");
        let px: f64 = body_attr(dom, "data-smallest-label-px").unwrap().parse().unwrap();
        assert!(px >= 11.0, "{what}: labels of {px} px: {head}");
        let labels: usize = body_attr(dom, "data-labels").unwrap().parse().unwrap();
        assert!(labels >= min_labels, "{what}: {labels} labels drawn: {head}");
    };
    assert_eq!(body_attr(&dom, "data-offscreen-at-first-paint").as_deref(), Some("0"), "at first paint");
    readable(&dom, "at load", 75);
    // The same page at a small window still fits, with fewer labels rather than smaller ones.
    let small = rendered_dom(&url, "640,480").unwrap();
    readable(&small, "small window", 5);
    // After a click revealed a node, Fit fits what is shown.
    let fitted = rendered_dom(&format!("{url}#expand=f0&fit"), "1280,800").unwrap();
    assert_eq!(body_attr(&fitted, "data-nodes-shown").as_deref(), Some("151"));
    readable(&fitted, "after Fit", 75);
    // Clicking f0 (through the page's own click handler) shows its caller from the other file.
    assert!(
        dom.contains("data-name=\"caller_of_f0\"") && dom.contains("class=\"node hidden\" data-name=\"caller_of_f0\""),
        "the caller starts hidden"
    );
    let expanded = rendered_dom(&format!("{url}#expand=f0"), "1280,800").unwrap();
    assert_eq!(body_attr(&expanded, "data-nodes-shown").as_deref(), Some("151"), "one more node after the click");
    assert!(
        !expanded.contains("class=\"node hidden\" data-name=\"caller_of_f0\""),
        "caller_of_f0 is shown after the click"
    );
    // The list beside the graph names what is shown, and its items are the nodes.
    assert!(expanded.contains("data-name=\"caller_of_f0\" title=\"other.py:1\""), "the list names the revealed node");
}

#[test]
fn no_confident_edges_from_calls_on_values_of_unknown_type() {
    let r = TestRepo::new();
    r.write(
        "app/sessions.py",
        "import os\n\nfrom app.adapters import HTTPAdapter\n\n\nclass Session:\n    def __init__(self):\n        self.adapter = HTTPAdapter()\n\n    def get(self, url, **kwargs):\n        stream = kwargs.get(\"stream\")\n        proxy = os.environ.get(\"HTTP_PROXY\")\n        return self.send(url, stream, proxy)\n\n    def send(self, request, stream, proxy):\n        return self.adapter.send(request)\n\n\ndef fetch(thing):\n    return thing.close_all()\n",
    );
    r.write("app/adapters.py", "class HTTPAdapter:\n    def send(self, request):\n        return request\n\n    def close_all(self):\n        return None\n");
    // C++: a class declared with an export macro is a class, with its subclasses.
    r.write("cc/iterator.h", "namespace db {\nclass DB_EXPORT Iterator {\n public:\n  virtual void Next() = 0;\n};\nclass MergingIterator : public Iterator {\n public:\n  void Next() override {}\n};\n}\n");
    r.write("app/__init__.py", "");
    r.write("app/client.py", "from . import adapters\n\n\ndef make():\n    return adapters.HTTPAdapter()\n");
    r.write("app/Parser.java", "import java.util.Iterator;\n\nclass JsonElement {}\n\nclass JsonStreamParser implements Iterator<JsonElement> {\n    public boolean hasNext() { return false; }\n}\n");
    r.commit_all("init");
    // dict.get / os.environ.get are not Session.get.
    let callers = query(&r, "callers", "Session.get");
    assert!(callers["results"].as_array().unwrap().is_empty(), "{callers}");
    let callees = query(&r, "callees", "Session.get");
    assert!(names(&callees).contains("Session.send") && !names(&callees).contains("Session.get"), "{callees}");
    // A field's type from the constructor: self.adapter.send is HTTPAdapter.send, resolved.
    let callees = query(&r, "callees", "Session.send");
    assert_eq!(confidence_of(&callees, "HTTPAdapter.send"), "resolved", "{callees}");
    // A method on a value of unknown type is labelled for what it is: inferred by name.
    let callees = query(&r, "callees", "fetch");
    assert_eq!(confidence_of(&callees, "HTTPAdapter.close_all"), "inferred", "{callees}");
    // `from . import adapters` imports the submodule, not the package's __init__.py.
    let imports = r.json(&["--no-dense", "graph", "query", "imports", "app/client.py"]);
    let files: BTreeSet<String> = imports["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["relation"] == "imports")
        .map(|l| l["node"]["path"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(files, set(&["app/adapters.py"]), "{imports}");
    let subs = query(&r, "subclasses", "db.Iterator");
    assert_eq!(names(&subs), set(&["db.MergingIterator"]), "{subs}");
    // A generic base is its head type, not its type argument.
    let supers = query(&r, "superclasses", "JsonStreamParser");
    assert!(!names(&supers).contains("JsonElement"), "{supers}");
    // A leaf name finds every definition of it.
    let defs = r.json(&["--no-dense", "find-definition", "send"]);
    let found: BTreeSet<String> =
        defs["results"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(found, set(&["HTTPAdapter.send", "Session.send"]));
    // A class previews its own line, not its largest method.
    let d = r.json(&["--no-dense", "find-definition", "Session"]);
    assert!(d["results"][0]["signature"].as_str().unwrap().starts_with("class Session:"), "{d}");
}

#[test]
fn evaluate_graph_scores_edges_against_a_truth_file() {
    let r = TestRepo::new();
    r.write(
        "m.py",
        "def helper():\n    return 1\n\n\ndef main():\n    return helper() + other()\n\n\ndef other():\n    return 2\n",
    );
    let commit = r.commit_all("init");
    let truth = serde_json::json!({
        "repo": "test/m", "commit": commit, "language": "python",
        "focus_symbols": ["m.py:main"], "focus_classes": [], "focus_files": ["m.py"],
        "calls": [{"from": "m.py:main", "to": "m.py:helper", "line": 6}, {"from": "m.py:main", "to": "m.py:missing", "line": 6}],
        "inherits": [], "imports": []
    });
    r.write("truth.json", &truth.to_string());
    let v = r.json(&["--no-dense", "evaluate", "graph", "truth.json"]);
    // Found helper and other; the truth has helper and an edge the graph cannot have.
    assert_eq!(
        (v["calls"]["truth"].as_u64(), v["calls"]["found"].as_u64(), v["calls"]["correct"].as_u64()),
        (Some(2), Some(2), Some(1)),
        "{v}"
    );
    assert_eq!(v["calls"]["precision"], 0.5);
    assert_eq!(v["calls"]["recall"], 0.5);
    assert_eq!(v["calls"]["by_confidence"]["extracted"], json!([1, 2]));
    assert_eq!(v["unknown_focus"], json!([]));
}

#[test]
fn typed_parameters_give_calls_on_them_a_receiver_type() {
    let r = TestRepo::new();
    r.write("shop/cart.py", "class Cart:\n    def total(self):\n        return 1\n\n\nclass Invoice:\n    def total(self):\n        return 2\n");
    r.write("shop/checkout.py", "from shop.cart import Cart\n\n\ndef checkout(cart: Cart):\n    return cart.total()\n");
    r.write("src/Till.java", "class Basket { int total() { return 1; } }\nclass Receipt { int total() { return 2; } }\nclass Till { int ring(Basket b) { return b.total(); } }\n");
    r.commit_all("typed");
    let callers = |sym: &str| callers_with_confidence(&r, sym);
    assert_eq!(callers("Cart.total"), pairs(&[("checkout", "resolved")]));
    assert!(callers("Invoice.total").is_empty(), "the annotation rules the other `total` out");
    assert_eq!(callers("Basket.total"), pairs(&[("Till.ring", "extracted")]));
    assert!(callers("Receipt.total").is_empty());
}

#[test]
fn bare_ruby_names_are_calls_on_self_unless_they_are_locals() {
    let r = TestRepo::new();
    r.write(
        "lib/reader.rb",
        "class Reader\n  def read(limit)\n    read_data\n    count = 0\n    count += limit\n    payload[\"x\"]\n  end\n\n  def read_data\n  end\n\n  def payload\n    {}\n  end\n\n  def count\n    0\n  end\n\n  def limit\n    1\n  end\nend\n",
    );
    // A top-level `def` of a file nobody requires is not what a bare name in a class calls.
    r.write("bench/script.rb", "def payload\n  nil\nend\n");
    r.commit_all("ruby");
    let callers = |sym: &str| callers_with_confidence(&r, sym);
    let read = pairs(&[("Reader.read", "extracted")]);
    assert_eq!(callers("Reader.read_data"), read);
    assert_eq!(callers("Reader.payload"), read);
    assert!(callers("Reader.count").is_empty(), "`count` is a local variable there");
    assert!(callers("Reader.limit").is_empty(), "`limit` is a parameter there");
    let v = r.json(&["--no-dense", "graph", "query", "--op", "callees", "--symbol", "Reader.read"]);
    assert!(v["results"].as_array().unwrap().iter().all(|l| l["node"]["path"] != "bench/script.rb"), "{v}");
}

#[test]
fn out_of_line_cpp_methods_inside_a_namespace_belong_to_their_class() {
    let r = TestRepo::new();
    // The public header lives apart from the implementation, as in many C++ libraries.
    r.write("include/store/memtable.h", "namespace store {\nclass MemTable {\n public:\n  bool Get(int key);\n  void Ref() { refs_++; }\n private:\n  int refs_;\n};\n}  // namespace store\n");
    r.write("db/memtable.cc", "#include \"store/memtable.h\"\n\nnamespace store {\n\nbool MemTable::Get(int key) {\n  return key > 0;\n}\n\n}  // namespace store\n");
    r.write(
        "db/version.cc",
        "namespace store {\nclass Version {\n public:\n  bool Get(int key) { return false; }\n};\n}\n",
    );
    r.write("db/db.cc", "#include \"store/memtable.h\"\n\nnamespace store {\n\nbool Lookup(int key) {\n  MemTable* mem = nullptr;\n  mem->Ref();\n  return mem->Get(key);\n}\n\n}  // namespace store\n");
    r.commit_all("cpp");
    let v = r.json(&["--no-dense", "graph", "query", "--op", "callees", "--symbol", "Lookup"]);
    let got: BTreeSet<(String, String)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["confidence"] != "external")
        .map(|l| {
            (
                format!("{}:{}", l["node"]["path"].as_str().unwrap(), l["node"]["name"].as_str().unwrap()),
                l["confidence"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("db/memtable.cc:store.MemTable.Get", "resolved"),
        ("include/store/memtable.h:store.MemTable.Ref", "resolved"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want, "{v}");
}

#[test]
fn javascript_call_and_apply_call_the_function_itself() {
    let r = TestRepo::new();
    r.write(
        "lib/transform.js",
        "export default function transformData(fns, response) {\n  return fns.reduce((d, fn) => fn(d), response);\n}\n",
    );
    r.write(
        "lib/dispatch.js",
        "import transformData from './transform.js';\n\nexport default function dispatchRequest(config) {\n  config.data = transformData.call(config, config.transformRequest);\n  return transformData.apply(config, [config.transformResponse]);\n}\n",
    );
    r.commit_all("js");
    assert_eq!(callers_with_confidence(&r, "transformData"), pairs(&[("dispatchRequest", "resolved")]));
}

#[test]
fn a_variable_holding_a_call_result_has_the_declared_return_type() {
    let r = TestRepo::new();
    r.write(
        "ui/bar.py",
        "class ProgressBar:\n    def update(self, n):\n        return n\n\n    def __enter__(self):\n        return self\n\n\nclass Spinner:\n    def update(self, n):\n        return n\n\n\ndef progressbar(items) -> \"ProgressBar\":\n    return ProgressBar()\n\n\ndef make_bar(items) -> ProgressBar:\n    return ProgressBar()\n",
    );
    r.write(
        "ui/run.py",
        "from ui.bar import make_bar\n\n\ndef run(items):\n    bar = make_bar(items)\n    bar.update(1)\n\n\ndef run_with(items):\n    with make_bar(items) as b:\n        b.update(2)\n",
    );
    r.commit_all("py");
    let got: BTreeSet<(String, String)> = callers_with_confidence(&r, "ProgressBar.update").into_iter().collect();
    assert_eq!(got, pairs(&[("run", "resolved"), ("run_with", "resolved")]).into_iter().collect());
    assert!(callers_with_confidence(&r, "Spinner.update").is_empty());
}

#[test]
fn ruby_singleton_class_methods_are_the_class_methods() {
    let r = TestRepo::new();
    r.write("lib/new.rb", "module Site\n  class New\n    class << self\n      def process(args)\n        args\n      end\n    end\n  end\nend\n");
    r.write("lib/cli.rb", "require_relative 'new'\n\nmodule Site\n  class Cli\n    def run(args)\n      Site::New.process(args)\n    end\n  end\nend\n");
    r.commit_all("ruby");
    assert_eq!(callers_with_confidence(&r, "process"), pairs(&[("Site.Cli.run", "resolved")]));
}

/// A Go service in the shape that misled the graph: a `Store` method beside `x.Store()` calls
/// on atomic fields, `mtx.Lock()` beside a local `Lock` method, `time.Duration(x)` beside a
/// local `Duration` method, standard-library imports beside local files named `context.go`,
/// `sync.go` and `config.yml`, and a test file of the same stem in another package.
fn go_service(r: &TestRepo) {
    r.write("go.mod", "module example.com/mon\n\ngo 1.22\n");
    r.write(
        "storage/remote/client.go",
        "package remote\n\nimport (\n\t\"context\"\n\t\"sync\"\n\t\"time\"\n\n\t\"example.com/mon/config\"\n)\n\ntype Client struct {\n\tmtx sync.Mutex\n\tcfg config.Config\n}\n\nfunc (c *Client) Store(ctx context.Context, data []byte) error {\n\tc.mtx.Lock()\n\tdefer c.mtx.Unlock()\n\t_ = retryAfterDuration(\"5\")\n\treturn nil\n}\n\nfunc retryAfterDuration(s string) time.Duration {\n\treturn time.Duration(5) * time.Second\n}\n",
    );
    r.write(
        "storage/remote/queue.go",
        "package remote\n\nimport (\n\t\"sync/atomic\"\n\t\"time\"\n)\n\ntype shards struct {\n\tminValidTime atomic.Int64\n\tlastSend     time.Duration\n}\n\nfunc (s *shards) sendSamples(c *Client) {\n\ts.minValidTime.Store(10)\n\td := retryAfterDuration(\"1\")\n\ts.lastSend = d\n}\n\nfunc (s *shards) runShard() {\n\ts.minValidTime.Store(20)\n}\n",
    );
    r.write(
        "storage/remote/queue_test.go",
        "package remote\n\nimport \"testing\"\n\nfunc TestSendSamples(t *testing.T) {\n\ts := &shards{}\n\ts.sendSamples(&Client{})\n}\n\nfunc TestRunShard(t *testing.T) {\n\ts := &shards{}\n\ts.runShard()\n}\n",
    );
    r.write("other/queue_test.go", "package other\n\nimport \"testing\"\n\nfunc TestOtherQueue(t *testing.T) {}\n");
    r.write("config/config.go", "package config\n\ntype Config struct{}\n");
    r.write(".github/ISSUE_TEMPLATE/config.yml", "name: bug\n");
    r.write("docs/config.md", "# config\n");
    r.write("web/context.go", "package web\n\ntype context struct{}\n");
    r.write("tsdb/fileutil/sync.go", "package fileutil\n\ntype DirLocker struct{}\n\nfunc (l *DirLocker) Lock() {}\n");
    r.write("model/timer.go", "package model\n\nimport \"time\"\n\ntype Timer struct{}\n\nfunc (t Timer) Duration() time.Duration { return 0 }\n\ntype Seconds int\n\nfunc Wait(n int) Seconds {\n\treturn Seconds(n)\n}\n");
    // Another module's `…/config` package is not this module's config/ directory.
    r.write("web2/api.go", "package web2\n\nimport (\n\tcommoncfg \"github.com/other/common/config\"\n\t\"example.com/mon/storage/remote\"\n)\n\nfunc Serve(c commoncfg.HTTPClientConfig) { _ = remote.Client{} }\n");
    r.commit_all("init");
}

#[test]
fn go_calls_on_foreign_types_and_standard_imports_stay_external() {
    let r = TestRepo::new();
    go_service(&r);
    // `s.minValidTime.Store()` is atomic.Int64's, `c.mtx.Lock()` sync.Mutex's,
    // `time.Duration(5)` a conversion in package time: no edge to the local namesakes.
    // `Seconds(n)` converts to a local type: not a call either.
    for sym in ["Client.Store", "DirLocker.Lock", "Timer.Duration", "Seconds"] {
        let callers = query(&r, "callers", sym);
        assert!(callers["results"].as_array().unwrap().is_empty(), "{sym}: {callers}");
    }
    // Standard-library imports are external; the module's own package is its directory's Go
    // file, never a YAML, Markdown or same-named file elsewhere.
    let (local, external) = imports_of(&r, "storage/remote/client.go");
    assert_eq!(local, set(&["config/config.go"]));
    assert_eq!(external, set(&["context", "sync", "time"]));
    let text = r.text(&["--no-dense", "graph", "query", "imports", "storage/remote/client.go"]);
    assert!(!text.contains("external external"), "{text}");
    // A tools module's dependencies are not the project's frameworks.
    r.write(
        "internal/tools/go.mod",
        "module example.com/mon/internal/tools\n\nrequire github.com/spf13/cobra v1.8.0\n",
    );
    r.commit_all("tools");
    let o = r.json(&["--no-dense", "repo-overview"]);
    assert!(!o["frameworks"].as_array().unwrap().iter().any(|f| f == "Cobra"), "{o}");
    assert!(o["manifests"].as_array().unwrap().iter().any(|m| m == "internal/tools/go.mod"), "{o}");
    // A package import is the package's files (its tests left out), each resolved; another
    // module's package is external.
    let imports = r.json(&["--no-dense", "graph", "query", "imports", "web2/api.go"]);
    let got: BTreeSet<(String, String)> = imports["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["relation"] == "imports")
        .map(|l| {
            (
                l["node"]["path"].as_str().unwrap_or(l["node"]["name"].as_str().unwrap()).to_string(),
                l["confidence"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("github.com/other/common/config", "external"),
        ("storage/remote/client.go", "resolved"),
        ("storage/remote/queue.go", "resolved"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want, "{imports}");
}

#[test]
fn callees_are_shown_where_they_are_defined_and_called_apart() {
    let r = TestRepo::new();
    go_service(&r);
    let v = query(&r, "callees", "shards.sendSamples");
    let link = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["node"]["name"] == "retryAfterDuration")
        .cloned()
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(link["node"]["path"], "storage/remote/client.go", "{link}");
    assert_eq!((link["site"].as_str(), link["line"].as_u64()), (Some("storage/remote/queue.go"), Some(15)), "{link}");
    let text = r.text(&["--no-dense", "describe-symbol", "shards.sendSamples"]);
    let line = text.lines().find(|l| l.contains("function retryAfterDuration")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("client.go:23") && line.contains("called at line 15"), "{line}");
    assert!(text.contains("storage/remote/queue.go:"), "the definition names the file of line 15: {text}");
}

#[test]
fn impact_follows_confident_edges_and_says_where_a_depth_limit_cut() {
    let r = TestRepo::new();
    go_service(&r);
    // A private function with two callers: those two, and the one test that reaches them.
    let v = r.json(&["--no-dense", "impact", "retryAfterDuration"]);
    assert_eq!(names(&v), set(&["Client.Store", "shards.sendSamples", "TestSendSamples"]), "{v}");
    assert_eq!(v["tests_to_rerun"], 1, "{v}");
    let tests: Vec<&str> = v["tests"].as_array().unwrap().iter().filter_map(|t| t["symbol"].as_str()).collect();
    assert_eq!(tests, ["TestSendSamples"], "{v}");
    assert_eq!(v["cut"], 0, "{v}");
    // One hop: the test two hops away is cut, and the answer says so.
    let v = r.json(&["--no-dense", "impact", "retryAfterDuration", "--max-depth", "1"]);
    assert_eq!(v["cut"], 1, "{v}");
    let text = r.text(&["--no-dense", "impact", "retryAfterDuration", "--max-depth", "1"]);
    assert!(text.contains("stopped at depth 1: 1 definition one hop further"), "{text}");
    // Conventions stay in the package: other/queue_test.go is not a test of storage/remote.
    let v = r.json(&["--no-dense", "find-tests-for", "shards.sendSamples"]);
    let paths: BTreeSet<String> =
        v["results"].as_array().unwrap().iter().map(|t| t["path"].as_str().unwrap().to_string()).collect();
    assert_eq!(paths, set(&["storage/remote/queue_test.go"]), "{v}");
}

#[test]
fn typescript_and_java_imports_resolve_as_their_tools_do() {
    let r = TestRepo::new();
    r.write(
        "tsconfig.json",
        "{\n  // the workspace's packages by name\n  \"compilerOptions\": {\n    \"paths\": {\n      \"@app/*\": [\"./packages/*/src\"],\n    },\n  },\n}\n",
    );
    r.write("packages/util/package.json", "{\"name\": \"@app/util\", \"main\": \"index.js\"}\n");
    r.write("packages/util/index.js", "module.exports = require('./dist/util.cjs.js')\n");
    r.write("packages/util/src/index.ts", "export { helper } from './helper'\n");
    r.write("packages/util/src/helper.ts", "export function helper(x: number): number {\n  return x\n}\n");
    r.write("packages/web/src/parser.ts", "export function parse(s: string) {\n  return s\n}\n");
    r.write(
        "packages/web/src/main.ts",
        "import { helper } from '@app/util'\nimport { parse } from '@babel/parser'\nimport { ref } from 'vue'\n\nexport function main() {\n  return helper(parse('1').length)\n}\n",
    );
    r.write(
        "src/main/java/com/ex/logging/Logger.java",
        "package com.ex.logging;\npublic class Logger { public void log(String s) {} }\n",
    );
    r.write(
        "src/main/java/com/ex/App.java",
        "package com.ex;\nimport java.util.logging.Logger;\nimport com.ex.logging.Logger;\npublic class App { }\n",
    );
    r.commit_all("init");
    // tsconfig paths map the package to its sources (not the CommonJS stub beside them);
    // installed packages stay external, whatever local file shares their last name.
    let (local, external) = imports_of(&r, "packages/web/src/main.ts");
    assert_eq!(local, set(&["packages/util/src/index.ts"]));
    assert_eq!(external, set(&["@babel/parser", "vue"]));
    // The JDK's packages are never a local package that ends the same way.
    let (local, external) = imports_of(&r, "src/main/java/com/ex/App.java");
    assert_eq!(local, set(&["src/main/java/com/ex/logging/Logger.java"]));
    assert_eq!(external, set(&["java.util.logging"]), "the JDK import is external");
}

#[test]
fn a_kotlin_base_named_through_its_outer_type_is_the_nested_type() {
    let r = TestRepo::new();
    r.write("a/Codec.kt", "package a\n\ninterface ExchangeCodec {\n  interface Carrier {\n    fun cancel()\n  }\n}\n");
    r.write("a/Plan.kt", "package a\n\nclass Plan : ExchangeCodec.Carrier, Runnable {\n  override fun cancel() {}\n  override fun run() {}\n}\n");
    r.commit_all("init");
    let sup = query(&r, "superclasses", "Plan");
    let local: BTreeSet<String> = sup["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["node"]["path"].is_string())
        .map(|l| l["node"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(local, set(&["ExchangeCodec.Carrier"]), "{sup}");
}

/// (name, relation) of an impact's confident dependants.
fn dependants(v: &Value) -> BTreeSet<(String, String)> {
    let n = v["confident"].as_u64().unwrap() as usize;
    v["results"].as_array().unwrap()[..n]
        .iter()
        .map(|l| (l["node"]["name"].as_str().unwrap().to_string(), l["relation"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn references_make_dependants_and_tests_in_python() {
    let r = TestRepo::new();
    r.write("mw/__init__.py", "");
    r.write(
        "mw/retry.py",
        "class RetryMiddleware:\n    @classmethod\n    def from_crawler(cls, crawler):\n        return cls()\n\n    def process(self, request):\n        return request\n\n\ndef exponential_backoff(attempt):\n    return 2 ** attempt\n\n\ndef retry_link(opts):\n    return opts[\"delay\"](1)\n",
    );
    r.write("mw/utils.py", "def build_from_crawler(objcls, crawler):\n    return objcls.from_crawler(crawler)\n");
    r.write(
        "mw/client.py",
        "from mw.retry import retry_link, exponential_backoff\n\n\ndef make_client():\n    return retry_link({\"delay\": exponential_backoff})\n",
    );
    r.write(
        "tests/test_retry.py",
        "from mw.retry import RetryMiddleware, exponential_backoff, retry_link\nfrom mw.utils import build_from_crawler\n\n\ndef test_direct():\n    RetryMiddleware().process(1)\n\n\ndef test_built():\n    mw = build_from_crawler(RetryMiddleware, object())\n    assert mw\n\n\ndef test_backoff():\n    assert retry_link({\"delay\": exponential_backoff}) == 2\n",
    );
    r.commit_all("retry");

    // The class passed as a value to a factory is tested by that test, as well as by the one that
    // builds it directly.
    let tests = r.json(&["--no-dense", "find-tests-for", "RetryMiddleware"]);
    let graph_tests: BTreeSet<String> = tests["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["origin"] == "graph")
        .filter_map(|t| t["symbol"].as_str().map(String::from))
        .collect();
    assert_eq!(graph_tests, set(&["test_built", "test_direct"]), "{tests}");

    // A callback passed in a dict: its referrer is a dependant, and the test that passes it is
    // found through the graph, not by a naming convention.
    let impact = r.json(&["--no-dense", "impact", "exponential_backoff"]);
    let deps = dependants(&impact);
    assert!(deps.contains(&("make_client".to_string(), "references".to_string())), "{impact}");
    assert!(
        impact["tests"].as_array().unwrap().iter().any(|t| t["symbol"] == "test_backoff" && t["origin"] == "graph"),
        "{impact}"
    );
    let text = r.text(&["--no-dense", "impact", "exponential_backoff"]);
    assert!(text.contains("referenced by"), "{text}");

    // graph query over the new relation, both ways.
    assert_eq!(names(&query(&r, "referenced_by", "exponential_backoff")), set(&["make_client", "test_backoff"]));
    assert!(names(&query(&r, "references", "make_client")).contains("exponential_backoff"));
    // A parameter that holds the class is not the class: `objcls.from_crawler` stays unresolved
    // rather than pointing at a same-named definition elsewhere.
    assert!(!names(&query(&r, "references", "build_from_crawler")).contains("RetryMiddleware"));
}

#[test]
fn module_level_values_are_definitions_and_receivers() {
    let r = TestRepo::new();
    r.write(
        "src/builder.ts",
        "export class Builder {\n  create(): number {\n    return 1;\n  }\n}\n\nexport const app = new Builder();\n",
    );
    r.write(
        "src/main.ts",
        "import { app } from './builder';\n\nexport function start(): number {\n  return app.create();\n}\n",
    );
    r.write("server.py", "class Flask:\n    def route(self, p):\n        return p\n\n\napp = Flask()\n");
    r.write("views.py", "from server import app\n\n\ndef index():\n    return app.route('/')\n");
    r.commit_all("values");

    let def = r.json(&["--no-dense", "find-definition", "app"]);
    let kinds: BTreeSet<String> =
        def["results"].as_array().unwrap().iter().map(|d| d["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, set(&["variable"]), "{def}");
    // `impact app` answers, with the function that calls through it.
    let impact = r.json(&["--no-dense", "impact", "src/builder.ts:app"]);
    assert!(dependants(&impact).iter().any(|(n, _)| n == "start"), "{impact}");
    // A member call through an imported module-level value resolves through its initialiser's type.
    assert_eq!(callers_with_confidence(&r, "Builder.create"), pairs(&[("start", "resolved")]));
    assert_eq!(callers_with_confidence(&r, "Flask.route"), pairs(&[("index", "resolved")]));
}

#[test]
fn typescript_precision_packages_shadowing_renames_private_and_recursion() {
    let r = TestRepo::new();
    r.write("package.json", "{\"name\": \"demo\", \"dependencies\": {\"esbuild\": \"1\"}}\n");
    r.write(
        "src/build.ts",
        "export function build(): number {\n  return 1;\n}\n\nexport function handler(): number {\n  return 2;\n}\n",
    );
    // An import from a package that is not in the repository is that package's function.
    r.write(
        "src/tool.ts",
        "import { build } from 'esbuild';\n\nexport function run(): number {\n  return build();\n}\n",
    );
    // A parameter shadows the module-level function of the same name.
    r.write("src/register.ts", "export function register(handler: () => number): number {\n  return handler();\n}\n");
    // A renamed re-export is followed to the definition.
    r.write("src/impl.ts", "export function jsxDEV(): number {\n  return 3;\n}\n");
    r.write("src/index.ts", "export { jsxDEV as jsx } from './impl';\nexport * from './build';\n");
    r.write(
        "src/app.ts",
        "import { jsx, handler as h } from './index';\n\nexport function render(): number {\n  return jsx() + h();\n}\n",
    );
    // `#private` methods, and recursion.
    r.write(
        "src/counter.ts",
        "export class Counter {\n  #step(n: number): number {\n    return n + 1;\n  }\n\n  next(n: number): number {\n    return this.#step(n);\n  }\n}\n\nexport function fact(n: number): number {\n  return n <= 1 ? 1 : n * fact(n - 1);\n}\n",
    );
    r.commit_all("ts");

    assert!(!names(&query(&r, "callers", "src/build.ts:build")).contains("run"));
    assert!(!names(&query(&r, "callers", "src/build.ts:handler")).contains("register"));
    assert_eq!(callers_with_confidence(&r, "jsxDEV"), pairs(&[("render", "resolved")]));
    // `handler as h` through `export *`.
    assert_eq!(names(&query(&r, "callers", "src/build.ts:handler")), set(&["render"]));
    assert_eq!(names(&query(&r, "callers", "Counter.#step")), set(&["Counter.next"]));
    let fact = query(&r, "callers", "fact");
    assert_eq!(names(&fact), set(&["fact"]), "{fact}");
    assert_eq!(fact["results"][0]["recursive"], true, "{fact}");
    let text = r.text(&["--no-dense", "graph", "query", "--op", "callers", "--symbol", "fact"]);
    assert!(text.contains("(recursion)"), "{text}");
}

#[test]
fn a_symbol_used_only_where_the_graph_cannot_see_says_so() {
    let r = TestRepo::new();
    r.write("plugins.py", "def on_start():\n    return 1\n");
    r.write("loader.py", "import importlib\n\n\ndef load():\n    return getattr(importlib.import_module('plugins'), 'on_start')\n\n\nHOOKS = 'on_start'\n");
    r.commit_all("dynamic");
    let impact = r.json(&["--no-dense", "impact", "on_start"]);
    assert_eq!(impact["confident"], 0, "{impact}");
    assert_eq!(impact["mentions"]["files"], 1, "{impact}");
    assert_eq!(impact["mentions"]["first_files"], json!(["loader.py"]));
    let text = r.text(&["--no-dense", "impact", "on_start"]);
    assert!(text.contains("no confident dependant, but the name appears in"), "{text}");
}

#[test]
fn dependants_come_in_one_order_and_tests_are_listed_once() {
    let r = TestRepo::new();
    r.write("shop/__init__.py", "");
    r.write("shop/pricing.py", "def get_price(item):\n    return item * 2\n");
    r.write(
        "shop/cart.py",
        "from shop.pricing import get_price\n\n\ndef zeta_total(items):\n    return sum(get_price(i) for i in items)\n\n\ndef alpha_total(items):\n    return get_price(items[0])\n",
    );
    r.write(
        "tests/test_shop_pricing.py",
        "from shop.pricing import get_price\n\n\ndef test_one():\n    assert get_price(1) == 2\n\n\ndef test_two():\n    assert get_price(2) == 4\n\n\ndef test_three():\n    assert get_price(3) == 6\n",
    );
    r.commit_all("shop");

    // Production callers first, then tests; each group by path and line, ascending.
    let impact = r.json(&["--no-dense", "impact", "get_price"]);
    let order: Vec<&str> =
        impact["results"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap()).collect();
    assert_eq!(order, vec!["zeta_total", "alpha_total", "test_one", "test_two", "test_three"], "{impact}");
    let callers = query(&r, "callers", "get_price");
    let order: Vec<&str> =
        callers["results"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap()).collect();
    assert_eq!(order, vec!["zeta_total", "alpha_total", "test_one", "test_two", "test_three"], "{callers}");

    // describe_symbol lists each test once, under tests; callers holds production code and a count.
    let d = r.json(&["--no-dense", "describe-symbol", "get_price"]);
    assert_eq!(names_of(&d["callers"]), vec!["zeta_total", "alpha_total"], "{d}");
    assert_eq!(d["test_callers"], 3, "{d}");
    let tests: Vec<&str> = d["tests"].as_array().unwrap().iter().filter_map(|t| t["symbol"].as_str()).collect();
    assert_eq!(tests, vec!["test_one", "test_two", "test_three"], "{d}");
    let text = r.text(&["--no-dense", "describe-symbol", "get_price"]);
    assert_eq!(text.matches("test_two").count(), 1, "{text}");

    // `tests/test_<package>_<module>.py` is the module's test file by convention.
    let t = r.json(&["--no-dense", "find-tests-for", "shop/pricing.py"]);
    assert!(t["results"].as_array().unwrap().iter().any(|x| x["path"] == "tests/test_shop_pricing.py"), "{t}");

    // A name that is not there: one short line, the nearest existing name, no lexical chunks.
    let out = r.lynx(&["--no-dense", "find-definition", "get_prise"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.len() < 400, "{} characters: {text}", text.len());
    assert!(text.contains("no definition of \"get_prise\"") && text.contains("get_price"), "{text}");
    let v = r.json(&["--no-dense", "find-definition", "NoSuchThingHere"]);
    assert!(v.get("lexical").is_none() && v.to_string().len() < 400, "{v}");
    let v = r.json(&["--no-dense", "find-definition", "--lexical", "zeta"]);
    assert!(v["lexical"].as_array().is_some_and(|l| !l.is_empty()), "{v}");
}

fn names_of(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap()).collect()
}

#[test]
fn a_symbols_graph_page_puts_callers_left_callees_right_and_tests_apart() {
    let r = TestRepo::new();
    r.write(
        "app.py",
        "def leaf():\n    return 1\n\n\ndef mid():\n    return leaf()\n\n\ndef top():\n    return mid()\n\n\ndef other():\n    return mid()\n",
    );
    r.write("test_app.py", "from app import mid\n\n\ndef test_mid():\n    assert mid() == 1\n");
    r.commit_all("x");
    let out = r.file("mid.html");
    r.json(&["--no-dense", "graph", "export", "--symbol", "mid", "--out", out.to_str().unwrap()]);
    let Some(dom) = rendered_dom(&format!("file://{}", out.display()), "1280,800") else { return };
    // The opening tag of a node's group, and the x of its position.
    let tag = |name: &str| -> String {
        dom.split("<g ")
            .skip(1)
            .map(|t| t[..t.find('>').unwrap()].to_string())
            .find(|t| t.contains(&format!("data-name=\"{name}\"")))
            .unwrap_or_else(|| panic!("{name} not drawn"))
    };
    let x = |name: &str| -> f64 {
        let t = tag(name);
        let at = t.find("translate(").unwrap() + "translate(".len();
        t[at..].split([' ', ',', ')']).next().unwrap().parse().unwrap()
    };
    let centre = x("mid");
    for caller in ["top", "other", "test_mid"] {
        assert!(x(caller) < centre, "{caller} at {} is not left of mid at {centre}", x(caller));
    }
    assert!(x("leaf") > centre, "leaf (a callee) at {} is not right of mid at {centre}", x("leaf"));
    let class = |name: &str| -> String {
        let t = tag(name);
        let at = t.find("class=\"").unwrap() + 7;
        t[at..at + t[at..].find('"').unwrap()].to_string()
    };
    assert!(class("test_mid").split(' ').any(|c| c == "test"), "the test is marked: {}", tag("test_mid"));
    assert!(!class("top").split(' ').any(|c| c == "test"), "{}", tag("top"));
}

#[test]
fn a_call_reaches_the_implementation_after_overload_stubs() {
    let r = TestRepo::new();
    r.write("src/pkg/__init__.py", "");
    r.write(
        "src/pkg/types.py",
        "import typing as t\n\n\n@t.overload\ndef convert_type(ty: None) -> str: ...\n\n\n@t.overload\ndef convert_type(ty: int) -> int: ...\n\n\ndef convert_type(ty):\n    return ty\n\n\nclass Context:\n    @t.overload\n    def invoke(self, cb: None) -> None: ...\n\n    @t.overload\n    def invoke(self, cb: int) -> int: ...\n\n    def invoke(self, cb):\n        return cb\n",
    );
    r.write(
        "src/pkg/core.py",
        "from . import types\nfrom .types import Context, convert_type\n\n\ndef through_module(x):\n    return types.convert_type(x)\n\n\ndef by_name(x):\n    return convert_type(x)\n\n\ndef on_typed_receiver(ctx: Context):\n    return ctx.invoke(None)\n",
    );
    r.write(
        "web/format.ts",
        "export function fmt(x: string): string;\nexport function fmt(x: number): string;\nexport function fmt(x: any): string {\n  return String(x);\n}\n",
    );
    r.write(
        "web/use.ts",
        "import { fmt } from './format';\n\nexport function show(n: number) {\n  return fmt(n);\n}\n",
    );
    r.commit_all("overloads");
    // Every call the code decides is one confident edge to the implementation, not an
    // ambiguous edge to each stub.
    let mut convert = callers_with_confidence(&r, "convert_type");
    convert.sort();
    assert_eq!(convert, pairs(&[("by_name", "resolved"), ("through_module", "resolved")]));
    assert_eq!(callers_with_confidence(&r, "invoke"), pairs(&[("on_typed_receiver", "resolved")]));
    assert_eq!(callers_with_confidence(&r, "fmt"), pairs(&[("show", "resolved")]));
    // The edge lands on the implementation (the last definition), not on a stub.
    let callees = query(&r, "callees", "through_module");
    let line = callees["results"][0]["node"]["start_line"].as_u64();
    assert_eq!(line, Some(12), "{callees}");
}
