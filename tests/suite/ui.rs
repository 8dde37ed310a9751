//! `git lynx ui` end to end: a real server on 127.0.0.1 over a real repository, its security
//! rules checked with raw HTTP requests, its pages loaded in headless Chromium.

use crate::common;

use common::{TestRepo, calc_project, prerequisite};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

struct Ui {
    child: Child,
    url: String,
    port: u16,
    token: String,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(r: &TestRepo, extra: &[&str]) -> Ui {
    let mut args = vec!["--no-dense", "ui"];
    args.extend_from_slice(extra);
    let mut child = r.cmd(&args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let port: u16 = url["http://127.0.0.1:".len()..].split('/').next().unwrap().parse().unwrap();
    let token = url.split("token=").nth(1).unwrap().to_string();
    Ui { child, url, port, token }
}

/// One raw HTTP/1.1 request: (status, body).
fn request(port: u16, raw: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

fn get(ui: &Ui, path: &str, headers: &str) -> (u16, String) {
    request(
        ui.port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n{headers}\r\n", ui.port),
    )
}

fn post(ui: &Ui, path: &str, origin: &str, body: &str) -> (u16, String) {
    request(
        ui.port,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nCookie: lynx_ui={}\r\nOrigin: {origin}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            ui.port,
            ui.token,
            body.len()
        ),
    )
}

fn project() -> (TestRepo, String) {
    let r = TestRepo::new();
    calc_project(&r);
    r.write("legacy.py", "def only_in_old_version():\n    return 'kept for the numbat importer'\n");
    let old = r.commit_all("with legacy");
    r.remove("legacy.py");
    r.commit_all("drop legacy");
    r.json(&["--no-dense", "index", "--rev", &old]);
    (r, old)
}

#[test]
fn requests_need_the_secret_this_host_and_this_origin() {
    let (r, _) = project();
    let ui = start(&r, &[]);
    let (status, body) = get(&ui, "/api/overview", "");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("secret link"), "{body}");
    let (status, body) = get(&ui, &format!("/api/overview?token={}", ui.token), "");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    // The cookie is the secret too; a wrong one is not.
    assert_eq!(get(&ui, "/api/config", &format!("Cookie: lynx_ui={}\r\n", ui.token)).0, 200);
    assert_eq!(get(&ui, "/api/config", "Cookie: lynx_ui=0123456789abcdef0123456789abcdef\r\n").0, 403);
    // DNS rebinding: another host name is refused even with the secret.
    let (status, _) = request(
        ui.port,
        &format!(
            "GET /api/overview?token={} HTTP/1.1\r\nHost: attacker.example:{}\r\nConnection: close\r\n\r\n",
            ui.token, ui.port
        ),
    );
    assert_eq!(status, 403);
    // A cross-origin POST is refused; this origin's POST needs --allow-write.
    let body = r#"{"outcome": "helpful", "comment": "x"}"#;
    let (status, text) = post(&ui, "/api/feedback", "http://attacker.example", body);
    assert_eq!((status, text.contains("cross-origin")), (403, true), "{text}");
    let (status, text) = post(&ui, "/api/feedback", &format!("http://127.0.0.1:{}", ui.port), body);
    assert_eq!((status, text.contains("read-only")), (403, true), "{text}");
    assert!(!r.path().join(".lynx/feedback.jsonl").exists());
    // The page learns that before anyone types.
    let (status, text) = get(&ui, &format!("/api/feedback?token={}", ui.token), "");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!((status, &v["writable"]), (200, &serde_json::json!(false)), "{text}");
    assert!(v["why"].as_str().unwrap().contains("--allow-write"), "{text}");
    // Nothing outside the repository can be read: files come from the view's own listing.
    for path in ["../../../../etc/passwd", "/etc/passwd", "src/../../../etc/passwd", ".git/config"] {
        let (status, text) = get(&ui, &format!("/api/file?path={}&token={}", path.replace('/', "%2F"), ui.token), "");
        assert_eq!(status, 400, "{path}: {text}");
        assert!(!text.contains("root:"), "{text}");
    }
    let (status, _) = get(&ui, &format!("/../../../../etc/passwd?token={}", ui.token), "");
    assert_eq!(status, 404);
    let (status, text) = get(&ui, &format!("/api/file?path=src%2Fcalc.py&token={}", ui.token), "");
    assert_eq!(status, 200, "{text}");

    // With --allow-write, this origin may record feedback.
    let writer = start(&r, &["--allow-write"]);
    let (status, text) = post(&writer, "/api/feedback", &format!("http://127.0.0.1:{}", writer.port), body);
    assert_eq!(status, 200, "{text}");
    assert!(std::fs::read_to_string(r.path().join(".lynx/feedback.jsonl")).unwrap().contains("helpful"));
    let (_, text) = get(&writer, &format!("/api/feedback?token={}", writer.token), "");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!((&v["writable"], &v["why"]), (&serde_json::json!(true), &serde_json::Value::Null), "{text}");
}

/// The page's own part of a DOM (inside `<main>`).
fn main_of(dom: &str) -> &str {
    let start = dom.find("<main").unwrap_or(0);
    &dom[start..dom[start..].find("</main>").map_or(dom.len(), |e| start + e)]
}

/// `(path, line)` of every link into the file view.
fn links_to_files(html: &str) -> Vec<(String, u32)> {
    html.split("href=\"#file?")
        .skip(1)
        .map(|rest| {
            let query = &rest[..rest.find('"').unwrap()].replace("&amp;", "&");
            let get = |k: &str| {
                query.split('&').find_map(|kv| kv.strip_prefix(&format!("{k}="))).unwrap_or("").replace("%2F", "/")
            };
            (get("path"), get("line").parse().unwrap_or(0))
        })
        .collect()
}

/// The page's text outside links, code and form controls, tags removed.
fn outside_links_and_code(html: &str) -> String {
    let mut s = html.to_string();
    for (open, close) in [("<a ", "</a>"), ("<pre", "</pre>"), ("<code", "</code>"), ("<select", "</select>")] {
        while let Some(a) = s.find(open) {
            let Some(b) = s[a..].find(close) else { break };
            s.replace_range(a..a + b + close.len(), " ");
        }
    }
    let mut text = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
}

/// The page's DOM after its scripts ran, and a screenshot kept as a test artefact.
fn browse(url: &str, shot: &str) -> Option<String> {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|b| std::process::Command::new("which").arg(b).output().is_ok_and(|o| o.status.success()))?;
    let run = |extra: &[String]| {
        let profile = tempfile::tempdir().unwrap();
        std::process::Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(["--virtual-time-budget=10000"])
            .args(extra)
            .arg(url)
            .output()
            .unwrap()
    };
    let dom = String::from_utf8_lossy(&run(&["--dump-dom".into()]).stdout).into_owned();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(format!("{shot}.png"));
    run(&[format!("--screenshot={}", png.display())]);
    assert!(std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0) > 2000, "no screenshot at {}", png.display());
    Some(dom)
}

#[test]
fn pages_load_in_a_browser_and_search_any_revision() {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .any(|b| std::process::Command::new("which").arg(b).output().is_ok_and(|o| o.status.success()));
    if !prerequisite("chromium", chromium, "apt-get install chromium; the pages were not loaded") {
        return;
    }
    let (r, old) = project();
    // A file left out (binary), and a committed team setting for the configuration page.
    std::fs::write(r.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0").unwrap();
    r.write("lynx.toml", "[search]\nk = 7\n");
    r.json(&["--no-dense", "index"]);
    let ui = start(&r, &[]);
    let repo_name = r.path().file_name().unwrap().to_string_lossy().into_owned();

    let dom = browse(&format!("{}#dashboard", ui.url), "dashboard").unwrap();
    assert!(dom.contains("data-ready=\"dashboard\""), "{dom}");
    assert!(dom.contains(&format!("class=\"source\" data-name=\"{repo_name}\"")), "{dom}");
    assert!(dom.contains("Recent feedback") && dom.contains("fresh"), "{dom}");
    // No text dump, and the "why" column says why files are left out.
    assert!(!main_of(&dom).contains("<pre"), "{dom}");
    assert!(dom.contains("<td class=\"why\">1 file not indexed: binary 1</td>"), "{dom}");

    // A function that exists only in an older commit: found there, not in the working tree.
    let dom = browse(&format!("{}#search?q=only_in_old_version&rev={old}", ui.url), "search-old").unwrap();
    assert!(dom.contains("data-ready=\"search\""), "{dom}");
    assert!(dom.contains("class=\"hit card\" data-path=\"legacy.py\""), "{dom}");
    assert!(dom.contains("<mark>only_in_old_version</mark>"), "the query is highlighted: {dom}");
    let dom = browse(&format!("{}#search?q=only_in_old_version", ui.url), "search-now").unwrap();
    assert!(dom.contains("data-ready=\"search\"") && !dom.contains("data-path=\"legacy.py\""), "{dom}");
    // The revision picker offers branches and commits.
    assert!(dom.contains(&format!("value=\"{old}\"")), "{dom}");

    let dom = browse(&format!("{}#symbol?name=total", ui.url), "symbol").unwrap();
    assert!(dom.contains("data-ready=\"symbol\"") && dom.contains("Square.area"), "callers of total: {dom}");
    // Rendered from the answer: callers are links to their symbol pages, and every `path:line`
    // on the page is a link into the file view at that line.
    assert!(dom.contains("<a class=\"sym\" href=\"#symbol?name=Square.area\">Square.area</a>"), "{dom}");
    let page = main_of(&dom);
    assert!(!page.contains("<pre id=\"describe\""), "not the CLI's text: {page}");
    let locations = links_to_files(page);
    assert!(locations.iter().any(|(path, line)| path == "src/calc.py" && *line == 6), "the definition: {locations:?}");
    assert!(locations.iter().any(|(path, _)| path == "src/shapes.py"), "the caller's place: {locations:?}");
    let bare = outside_links_and_code(page);
    let unlinked: Vec<&str> =
        bare.split(|c: char| c.is_whitespace() || c == '(' || c == ')').filter(|w| w.contains(".py:")).collect();
    assert!(unlinked.is_empty(), "every path:line is a link: {unlinked:?} in {bare}");
    let (path, line) = &locations[0];
    let file = browse(&format!("{}#file?path={path}&line={line}", ui.url), "file").unwrap();
    assert!(
        file.contains(&format!("class=\"line at\" id=\"L{line}\"")),
        "the file view opens at {path}:{line}: {file}"
    );

    let dom = browse(&format!("http://127.0.0.1:{}/graph?symbol=add&token={}", ui.port, ui.token), "graph").unwrap();
    assert!(dom.contains("data-offscreen-at-first-paint=\"0\"") && dom.contains("data-name=\"total\""), "{dom}");

    let dom = browse(&format!("{}#impact?range=HEAD~1..HEAD", ui.url), "impact").unwrap();
    assert!(dom.contains("data-ready=\"impact\"") && dom.contains("legacy.py"), "{dom}");
    // A designed page: no Markdown syntax outside code, the deleted definition named.
    let text = outside_links_and_code(main_of(&dom));
    for mark in ["###", "**", "|"] {
        assert!(!text.contains(mark), "`{mark}` on the impact page: {text}");
    }
    assert!(dom.contains("class=\"badge deleted\">deleted</span>") && dom.contains("only_in_old_version"), "{dom}");

    let dom = browse(&format!("{}#config", ui.url), "config").unwrap();
    assert!(dom.contains("The configuration is valid."), "{dom}");
    // Each setting with its effective value and the file it came from.
    let row = |key: &str| {
        let at = dom.find(&format!("data-key=\"{key}\"")).unwrap_or_else(|| panic!("no row for {key}: {dom}"));
        dom[at..at + dom[at..].find("</tr>").unwrap()].to_string()
    };
    assert!(row("search.k").contains("<code>7</code>") && row("search.k").contains("lynx.toml"), "{}", row("search.k"));
    assert!(row("search.mode").contains("default"), "{}", row("search.mode"));
    assert!(row("search.dense_weight").contains("<code>0.4</code>"), "{}", row("search.dense_weight"));
    // The model this process uses, not only the configuration's `model.name`.
    assert!(dom.contains("embedding model: none, dense retrieval is off: turned off with --no-dense"), "{dom}");

    let dom = browse(&format!("{}#feedback", ui.url), "feedback").unwrap();
    assert!(dom.contains("data-ready=\"feedback\"") && dom.contains("name=\"outcome\""), "{dom}");
    // Read-only: the form is disabled and says why before anything is typed.
    assert!(dom.contains("<fieldset disabled=\"\"") && dom.contains("id=\"read-only\""), "{dom}");
    assert!(dom.contains("start it with `git lynx ui --allow-write` to record feedback"), "{dom}");
}

#[test]
fn working_tree_answers_follow_saves() {
    let (r, _) = project();
    let ui = start(&r, &[]);
    let search = |q: &str| -> Vec<String> {
        let (status, body) = get(&ui, &format!("/api/search?q={q}&token={}", ui.token), "");
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["results"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(search("wombat").is_empty());
    // Saved, then asked at once: the answer sees the save (the listing is reused only until a
    // change, and a question waits for the watcher to have seen every earlier save).
    for round in 0..3 {
        let name = format!("src/burrow{round}.py");
        r.write(&name, &format!("def dig_{round}():\n    return 'wombat burrow {round}'\n"));
        let found = search("wombat");
        assert!(found.contains(&name), "round {round}: {found:?}");
        r.remove(&name);
        assert!(!search("wombat").contains(&name), "round {round}: removed file still answered");
    }
}

#[test]
fn a_read_only_interface_says_when_a_question_indexed_a_revision() {
    let (r, old) = project();
    r.write("extra.py", "def freshly_added():\n    return 'pangolin'\n");
    let newer = r.commit_all("newer");
    let ui = start(&r, &[]);
    let cookie = format!("Cookie: lynx_ui={}\r\n", ui.token);
    // Indexed before: nothing written.
    let (status, body) = get(&ui, &format!("/api/search?q=numbat&rev={old}"), &cookie);
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("indexed_now"), "{body}");
    // Never indexed: the answer says what it wrote.
    let (status, body) = get(&ui, &format!("/api/search?q=pangolin&rev={newer}"), &cookie);
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(v["indexed_now"].as_u64().unwrap_or(0) > 0, "{v}");
    let (_, again) = get(&ui, &format!("/api/search?q=pangolin&rev={newer}"), &cookie);
    assert!(!again.contains("indexed_now"), "{again}");
    // The page marks the words the ranking keeps, not the question's function words.
    let (_, body) =
        get(&ui, &format!("/api/search?q=how%20does%20the%20pangolin%20get%20added%3F&rev={newer}"), &cookie);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["highlight"], serde_json::json!(["pangolin", "get", "added"]), "{v}");
    // The page's `k` has the bound every surface has, said in the answer.
    let (status, body) = get(&ui, &format!("/api/search?q=pangolin&k=5000&rev={newer}"), &cookie);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("k = 5000 is more than a reading list; answered with the first 1000"), "{body}");
}

#[test]
fn a_workspace_ui_names_the_repository_of_every_hit() {
    let alpha = TestRepo::new();
    alpha.write("alpha.py", "def settle_quokka_ledger(book):\n    return book.close()\n");
    alpha.commit_all("alpha");
    let beta = TestRepo::new();
    beta.write("beta.py", "def settle_quokka_ledger(book):\n    return book.close(force=True)\n");
    beta.commit_all("beta");
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_workspace(dir.path(), &[("alpha", alpha.path()), ("beta", beta.path())]);
    let ui = start(&alpha, &["--workspace", file.to_str().unwrap()]);
    let (status, body) = get(&ui, &format!("/api/search?q=settle_quokka_ledger&token={}", ui.token), "");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let hits: Vec<(&str, &str)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["source"].as_str().unwrap_or(""), h["path"].as_str().unwrap()))
        .collect();
    assert!(hits.contains(&("alpha", "alpha.py")) && hits.contains(&("beta", "beta.py")), "{body}");
}
