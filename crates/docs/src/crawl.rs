//! Crawling a documentation site: breadth first from the start URLs and the site's sitemaps,
//! within a scope (same host, under a path prefix, include/exclude patterns), obeying
//! robots.txt (and its crawl delay), one request at a time with a polite delay, redirects
//! followed by hand (so each hop is scope-checked and loops are caught), canonical URLs
//! honoured, and conditional requests (ETag / Last-Modified) so an unchanged page is not
//! downloaded again. Every bound — pages, depth, requests, page size, time per request, URL
//! shape — is there because documentation sites contain traps (calendars, query-string loops,
//! mirrors of themselves).

use crate::config::{SourceConfig, SourceType};
use crate::docsource::{Page, Problem, Snapshot, TextStore};
use crate::html;
use anyhow::Result;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;
use url::Url;

crate::error::errors! {
    /// A webdoc source's settings that cannot be crawled, or a crawl this machine cannot do.
    pub enum CrawlError: Usage {
        NoUrl { source: String } => "source `{source}` is a webdoc source without a url: add `url = \"https://…\"`",
        NotAUrl { source: String, url: String, why: String } => "source `{source}`: `{url}` is not a URL ({why})",
        NotHttp { source: String, url: String } => "source `{source}`: `{url}` is not an http(s) URL",
        Hosts { source: String } => "source `{source}`: all start URLs must be on one host (make one source per site)",
        Prefix { source: String, prefix: String } =>
            "source `{source}`: url_prefix `{prefix}` must be a path starting with `/`",
        Seconds { source: String, what: &'static str } => "source `{source}`: {what} must be between 0 and 3600 seconds",
        NoChromium {} =>
            "render_js needs headless Chromium, and none was found: install it (Debian/Ubuntu: `apt-get install chromium`) or point LYNX_CHROMIUM at it, or set render_js = false",
    }
}

pub const DEFAULT_MAX_PAGES: usize = 500;
pub const DEFAULT_MAX_DEPTH: usize = 3;
pub const DEFAULT_DELAY_SECONDS: f64 = 0.5;
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 20.0;
/// A page bigger than this is not documentation worth indexing (and may be a trap).
pub const MAX_PAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Longest crawl delay a robots.txt can impose.
const MAX_ROBOTS_DELAY: f64 = 10.0;
const MAX_URL_LEN: usize = 1024;
/// Sitemap files read at most (a sitemap index may name many).
const MAX_SITEMAPS: usize = 20;
/// Skipped URLs listed at most (the count goes on).
const MAX_LISTED: usize = 200;

#[derive(Debug, Clone)]
pub struct Options {
    pub start: Vec<Url>,
    /// The path prefix the crawl stays under.
    pub prefix: String,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub max_pages: usize,
    pub max_depth: usize,
    pub delay: Duration,
    pub timeout: Duration,
    pub user_agent: String,
    pub keep_query: bool,
    pub render_js: bool,
}

impl Options {
    pub fn from_config(sc: &SourceConfig) -> Result<Options> {
        if sc.url.is_empty() {
            return Err(CrawlError::NoUrl { source: sc.name.clone() }.into());
        }
        let mut start = Vec::new();
        for u in &sc.url {
            let url = Url::parse(u.trim()).map_err(|e| CrawlError::NotAUrl {
                source: sc.name.clone(),
                url: u.clone(),
                why: e.to_string(),
            })?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(CrawlError::NotHttp { source: sc.name.clone(), url: u.clone() }.into());
            }
            start.push(normalize(&url, true).expect("a parsed http URL"));
        }
        if start.iter().any(|u| !same_site(&start[0], u)) {
            return Err(CrawlError::Hosts { source: sc.name.clone() }.into());
        }
        let prefix = match &sc.url_prefix {
            Some(p) if p.starts_with('/') => p.clone(),
            Some(p) => {
                return Err(CrawlError::Prefix { source: sc.name.clone(), prefix: p.clone() }.into());
            }
            None => {
                let path = start[0].path();
                path[..=path.rfind('/').unwrap_or(0)].to_string()
            }
        };
        let secs = |v: Option<f64>, default: f64, what: &'static str| -> Result<Duration> {
            let v = v.unwrap_or(default);
            if !(0.0..=3600.0).contains(&v) {
                return Err(CrawlError::Seconds { source: sc.name.clone(), what }.into());
            }
            Ok(Duration::from_secs_f64(v))
        };
        Ok(Options {
            start,
            prefix,
            include: sc.include_url_patterns.clone(),
            exclude: sc.exclude_url_patterns.clone(),
            max_pages: sc.max_pages.unwrap_or(DEFAULT_MAX_PAGES).max(1),
            max_depth: sc.max_depth.unwrap_or(DEFAULT_MAX_DEPTH),
            delay: secs(sc.request_delay_seconds, DEFAULT_DELAY_SECONDS, "request_delay_seconds")?,
            timeout: secs(sc.request_timeout_seconds, DEFAULT_TIMEOUT_SECONDS, "request_timeout_seconds")?
                .max(Duration::from_millis(100)),
            user_agent: sc
                .user_agent
                .clone()
                .unwrap_or_else(|| format!("git-lynx/{} (documentation indexer)", env!("CARGO_PKG_VERSION"))),
            keep_query: sc.keep_query,
            render_js: sc.render_js,
        })
    }
}

/// A URL as the crawl keys it: no fragment, and no query unless kept. None for non-http(s).
fn normalize(url: &Url, keep_query: bool) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let mut u = url.clone();
    u.set_fragment(None);
    if !keep_query {
        u.set_query(None);
    }
    Some(u)
}

/// Whether `u` is on the same site as `base`: scheme, host and port alike.
fn same_site(base: &Url, u: &Url) -> bool {
    u.scheme() == base.scheme()
        && u.host_str() == base.host_str()
        && u.port_or_known_default() == base.port_or_known_default()
}

/// Why a URL on the site is not followed (None: it is). Off-site links are not reported.
fn out_of_scope(o: &Options, u: &Url) -> Option<Option<&'static str>> {
    let base = &o.start[0];
    if !same_site(base, u) {
        return Some(None);
    }
    if !u.path().starts_with(&o.prefix) {
        return Some(None);
    }
    let s = u.as_str();
    if o.exclude.iter().any(|p| !p.is_empty() && s.contains(p.as_str())) {
        return Some(Some("matches exclude_url_patterns"));
    }
    if s.len() > MAX_URL_LEN {
        return Some(Some("URL longer than 1024 characters (crawl trap guard)"));
    }
    // The same segment over and over (`/a/b/a/b/a/b`) is a site linking into itself.
    let segs: Vec<&str> = u.path_segments().map(|s| s.filter(|x| !x.is_empty()).collect()).unwrap_or_default();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    if segs.iter().any(|s| {
        let c = counts.entry(s).or_default();
        *c += 1;
        *c >= 3
    }) {
        return Some(Some("a path segment repeats three times (crawl trap guard)"));
    }
    None
}

fn included(o: &Options, u: &Url) -> bool {
    o.include.is_empty() || o.include.iter().any(|p| u.as_str().contains(p.as_str()))
}

struct Fetched {
    status: u16,
    location: Option<String>,
    content_type: String,
    etag: Option<String>,
    last_modified: Option<String>,
    body: Vec<u8>,
}

struct Client {
    agent: ureq::Agent,
    requests: usize,
}

impl Client {
    fn new(o: &Options) -> Client {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(o.timeout))
            .timeout_connect(Some(o.timeout.min(Duration::from_secs(10))))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(o.user_agent.as_str())
            .build()
            .into();
        Client { agent, requests: 0 }
    }

    fn get(&mut self, url: &Url, prev: Option<&Page>) -> std::result::Result<Fetched, String> {
        self.requests += 1;
        let mut req = self.agent.get(url.as_str());
        if let Some(p) = prev {
            if let Some(e) = &p.etag {
                req = req.header("If-None-Match", e.as_str());
            }
            if let Some(m) = &p.last_modified {
                req = req.header("If-Modified-Since", m.as_str());
            }
        }
        let mut resp = req.call().map_err(|e| match e {
            ureq::Error::Timeout(_) => "no answer in time (request_timeout_seconds)".to_string(),
            other => other.to_string(),
        })?;
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let (status, location, content_type, etag, last_modified) = (
            resp.status().as_u16(),
            header("location"),
            header("content-type").unwrap_or_default().to_ascii_lowercase(),
            header("etag"),
            header("last-modified"),
        );
        let body = if status == 200 {
            resp.body_mut().with_config().limit(MAX_PAGE_BYTES).read_to_vec().map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => format!("larger than {} MiB", MAX_PAGE_BYTES / (1024 * 1024)),
                ureq::Error::Timeout(_) => "no answer in time (request_timeout_seconds)".to_string(),
                other => other.to_string(),
            })?
        } else {
            Vec::new()
        };
        Ok(Fetched { status, location, content_type, etag, last_modified, body })
    }
}

/// The site's robots.txt rules for our user agent (None: everything allowed).
fn robots(client: &mut Client, o: &Options, skipped: &mut Vec<Problem>) -> Option<texting_robots::Robot> {
    let mut url = o.start[0].clone();
    url.set_path("/robots.txt");
    url.set_query(None);
    match client.get(&url, None) {
        Ok(f) if f.status == 200 => match texting_robots::Robot::new(&o.user_agent, &f.body) {
            Ok(r) => Some(r),
            Err(e) => {
                skipped.push(Problem {
                    target: url.to_string(),
                    reason: format!("unreadable robots.txt ({e}); crawling as if it allowed everything"),
                });
                None
            }
        },
        _ => None,
    }
}

/// URLs listed by the sitemaps (robots.txt's, else `/sitemap.xml`), sitemap indexes followed.
fn sitemap_urls(client: &mut Client, o: &Options, robot: Option<&texting_robots::Robot>) -> Vec<Url> {
    let mut queue: VecDeque<Url> =
        robot.map(|r| r.sitemaps.iter().filter_map(|s| Url::parse(s).ok()).collect()).unwrap_or_default();
    if queue.is_empty() {
        let mut u = o.start[0].clone();
        u.set_path("/sitemap.xml");
        u.set_query(None);
        queue.push_back(u);
    }
    let loc = regex::Regex::new(r"(?is)<loc>\s*(.*?)\s*</loc>").expect("static regex");
    let mut out = Vec::new();
    let mut read = 0;
    while let Some(sm) = queue.pop_front() {
        // robots.txt and sitemap indexes may name any URL: only the site's own are read.
        if read >= MAX_SITEMAPS || !same_site(&o.start[0], &sm) {
            continue;
        }
        read += 1;
        let Ok(f) = client.get(&sm, None) else { continue };
        if f.status != 200 {
            continue;
        }
        let text = String::from_utf8_lossy(&f.body);
        let is_index = text.contains("<sitemapindex");
        for c in loc.captures_iter(&text) {
            let raw = c[1].replace("&amp;", "&");
            let Ok(u) = Url::parse(&raw) else { continue };
            if is_index { queue.push_back(u) } else { out.push(u) }
        }
    }
    out
}

/// Where headless Chromium is, for `render_js`.
fn chromium() -> Option<std::path::PathBuf> {
    if let Some(p) = crate::env::path(crate::env::LYNX_CHROMIUM) {
        return Some(p);
    }
    let path = crate::env::get_os(crate::env::PATH)?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// The DOM after the page's scripts ran.
fn render(browser: &std::path::Path, url: &Url, timeout: Duration) -> std::result::Result<String, String> {
    // A fresh profile per page: nothing carries over between pages or from the user's browser.
    let profile =
        std::env::temp_dir().join(format!("git-lynx-render-{}-{}", std::process::id(), crate::fsutil::now_nanos()));
    std::fs::create_dir_all(&profile).map_err(|e| e.to_string())?;
    let profile = Guard(profile);
    let mut child = std::process::Command::new(browser)
        .args(["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions", "--dump-dom"])
        .arg(format!("--virtual-time-budget={}", timeout.as_millis().min(30_000)))
        .arg(format!("--user-data-dir={}", profile.0.display()))
        .arg(url.as_str())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", browser.display()))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let deadline = std::time::Instant::now() + timeout + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the browser did not finish rendering in time".into());
            }
        }
    }
    let dom = reader.join().unwrap_or_default();
    if dom.trim().is_empty() { Err("the browser rendered nothing".into()) } else { Ok(dom) }
}

/// Removes the browser profile when rendering ends, however it ends.
struct Guard(std::path::PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn list(v: &mut Vec<Problem>, target: &Url, reason: impl Into<String>, dropped: &mut usize) {
    if v.len() < MAX_LISTED {
        v.push(Problem { target: target.to_string(), reason: reason.into() });
    } else {
        *dropped += 1;
    }
}

/// Crawls the site. Pages answered "not modified" keep the previous snapshot's text.
pub fn run(
    o: &Options,
    previous: Option<&Snapshot>,
    texts: &TextStore,
    progress: &crate::progress::Progress,
) -> Result<Snapshot> {
    let browser = if o.render_js {
        match chromium() {
            Some(b) => Some(b),
            None => {
                return Err(CrawlError::NoChromium {}.into());
            }
        }
    } else {
        None
    };
    // Earlier pages by the URL they were fetched from (their canonical name may differ).
    let prev: HashMap<&str, &Page> = previous
        .map(|s| s.pages.iter().map(|p| (p.url.as_deref().unwrap_or(&p.path), p)).collect())
        .unwrap_or_default();
    let mut snap = crate::docsource::empty(SourceType::Webdoc);
    let mut client = Client::new(o);
    let (mut failures, mut skipped) = (Vec::new(), Vec::new());
    let mut dropped = 0usize;
    let robot = robots(&mut client, o, &mut skipped);
    let delay = o.delay.max(Duration::from_secs_f64(
        robot.as_ref().and_then(|r| r.delay).map(|d| (d as f64).clamp(0.0, MAX_ROBOTS_DELAY)).unwrap_or(0.0),
    ));
    let mut queue: VecDeque<(Url, usize)> = o.start.iter().map(|u| (u.clone(), 0)).collect();
    for u in sitemap_urls(&mut client, o, robot.as_ref()) {
        if let Some(u) = normalize(&u, o.keep_query) {
            queue.push_back((u, 1));
        }
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut stored: HashSet<String> = HashSet::new();
    let mut redirects: HashMap<String, String> = HashMap::new();
    // Requests are bounded too: a site of redirects and errors must end.
    let max_requests = o.max_pages * 3 + 50;
    progress.start("crawling", o.max_pages as u64);
    while let Some((url, depth)) = queue.pop_front() {
        if snap.pages.len() >= o.max_pages {
            if !queue.is_empty() {
                skipped.push(Problem {
                    target: url.to_string(),
                    reason: format!(
                        "max_pages ({}) reached; {} more queued URLs not fetched",
                        o.max_pages,
                        queue.len() + 1
                    ),
                });
            }
            break;
        }
        if client.requests >= max_requests {
            failures.push(Problem {
                target: url.to_string(),
                reason: format!(
                    "stopped after {max_requests} requests (too many redirects or errors for {} pages)",
                    o.max_pages
                ),
            });
            break;
        }
        if !seen.insert(url.to_string()) {
            continue;
        }
        match out_of_scope(o, &url) {
            Some(Some(why)) => {
                list(&mut skipped, &url, why, &mut dropped);
                continue;
            }
            // Off the site or outside the prefix (a sitemap may list anything): not ours.
            Some(None) => continue,
            None => {}
        }
        if robot.as_ref().is_some_and(|r| !r.allowed(url.as_str())) {
            list(&mut skipped, &url, "disallowed by robots.txt", &mut dropped);
            continue;
        }
        if client.requests > 0 && !delay.is_zero() {
            std::thread::sleep(delay);
        }
        let before = prev.get(url.as_str()).copied();
        let f = match client.get(&url, before) {
            Ok(f) => f,
            Err(e) => {
                list(&mut failures, &url, e, &mut dropped);
                continue;
            }
        };
        match f.status {
            301 | 302 | 303 | 307 | 308 => {
                let Some(target) =
                    f.location.as_deref().and_then(|l| url.join(l).ok()).and_then(|t| normalize(&t, o.keep_query))
                else {
                    list(&mut failures, &url, format!("HTTP {} without a usable Location", f.status), &mut dropped);
                    continue;
                };
                redirects.insert(url.to_string(), target.to_string());
                // A chain that comes back to where it started is a loop.
                let mut at = target.to_string();
                let mut hops = 0;
                while let Some(next) = redirects.get(&at) {
                    hops += 1;
                    if *next == url.as_str() || hops > 20 {
                        break;
                    }
                    at = next.clone();
                }
                if redirects.get(&at).is_some_and(|n| *n == url.as_str()) || target == url {
                    list(&mut failures, &url, format!("redirect loop (through {target})"), &mut dropped);
                    continue;
                }
                // A redirect does not count as a step deeper.
                queue.push_front((target, depth));
                continue;
            }
            304 => {
                let Some(p) = before else {
                    list(&mut failures, &url, "HTTP 304 to an unconditional request", &mut dropped);
                    continue;
                };
                if stored.insert(p.path.clone()) {
                    let mut p = p.clone();
                    p.how = "not modified".into();
                    enqueue(o, &url, &p.links, depth, &mut queue);
                    snap.pages.push(p);
                    progress.inc(1);
                }
                continue;
            }
            200 => {}
            s => {
                list(&mut failures, &url, format!("HTTP {s}"), &mut dropped);
                continue;
            }
        }
        let is_html = f.content_type.is_empty() && looks_like_html(&f.body)
            || f.content_type.starts_with("text/html")
            || f.content_type.starts_with("application/xhtml");
        if !is_html {
            list(
                &mut skipped,
                &url,
                format!(
                    "not HTML ({})",
                    if f.content_type.is_empty() {
                        "no content type"
                    } else {
                        f.content_type.split(';').next().unwrap_or("")
                    }
                ),
                &mut dropped,
            );
            continue;
        }
        let mut text = crate::encoding::text(&f.body).into_owned();
        if let Some(b) = &browser {
            match render(b, &url, o.timeout) {
                Ok(dom) => text = dom,
                Err(e) => {
                    list(&mut failures, &url, format!("rendering failed ({e}); used the page as served"), &mut dropped)
                }
            }
        }
        let x = html::extract(&text);
        if let Some(why) = &x.cut {
            list(&mut skipped, &url, format!("only part of the page was read ({why})"), &mut dropped);
        }
        let links: Vec<String> = if x.nofollow {
            Vec::new()
        } else {
            x.links
                .iter()
                .filter_map(|l| url.join(l).ok())
                .filter_map(|u| normalize(&u, o.keep_query))
                .map(|u| u.to_string())
                .collect::<Vec<_>>()
        };
        let mut links = links;
        links.sort();
        links.dedup();
        enqueue(o, &url, &links, depth, &mut queue);
        if x.noindex {
            list(&mut skipped, &url, "the page asks not to be indexed (robots noindex)", &mut dropped);
            continue;
        }
        if !included(o, &url) {
            continue;
        }
        // The canonical URL names the page when it is on the same site.
        let key = x
            .canonical
            .as_deref()
            .and_then(|c| url.join(c).ok())
            .and_then(|c| normalize(&c, o.keep_query))
            .filter(|c| out_of_scope(o, c).is_none())
            .unwrap_or_else(|| url.clone());
        if !stored.insert(key.to_string()) {
            continue;
        }
        seen.insert(key.to_string());
        let mut markdown = x.markdown;
        if !markdown.starts_with("# ") && !x.title.is_empty() {
            markdown = format!("# {}\n\n{markdown}", x.title);
        }
        if markdown.trim().lines().count() <= 1 && markdown.trim().len() < 40 {
            list(&mut skipped, &url, "no text", &mut dropped);
            continue;
        }
        let (blob, new) = texts.put(&markdown)?;
        snap.new_texts += new as usize;
        snap.pages.push(Page {
            url: (key != url).then(|| url.to_string()),
            path: key.to_string(),
            blob,
            title: x.title,
            bytes: markdown.len() as u64,
            etag: f.etag,
            last_modified: f.last_modified,
            links,
            how: "fetched".into(),
        });
        progress.inc(1);
    }
    progress.finish();
    // A page that could not be fetched this time for a passing reason (a timeout, a server
    // error, the network) keeps its previous text: a bad crawl never loses what the last one had.
    // A page that is gone (404, 410) goes.
    for f in &failures {
        let gone = f.reason == "HTTP 404" || f.reason == "HTTP 410" || f.reason.starts_with("redirect loop");
        if let Some(p) = prev.get(f.target.as_str()).filter(|_| !gone)
            && stored.insert(p.path.clone())
        {
            let mut p = (*p).clone();
            p.how = format!("kept from the previous snapshot ({})", f.reason);
            snap.pages.push(p);
        }
    }
    if dropped > 0 {
        skipped.push(Problem { target: String::new(), reason: format!("{dropped} more not listed") });
    }
    snap.requests = client.requests;
    snap.failures = failures;
    snap.skipped = skipped;
    Ok(snap)
}

fn enqueue(o: &Options, from: &Url, links: &[String], depth: usize, queue: &mut VecDeque<(Url, usize)>) {
    if depth + 1 > o.max_depth {
        return;
    }
    for l in links {
        let Ok(u) = Url::parse(l) else { continue };
        if u != *from && !matches!(out_of_scope(o, &u), Some(None)) {
            queue.push_back((u, depth + 1));
        }
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}
