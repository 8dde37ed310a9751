//! `git lynx ui`: a local web interface served by this binary (assets embedded, nothing from a
//! CDN). It binds 127.0.0.1 only and every request must carry the run's secret (from the link
//! printed at start, kept as a same-site cookie), name this server as its host (no DNS
//! rebinding) and, for anything but a read, come from this origin; what changes the store
//! needs `--allow-write`. Pages call the same operations as the CLI and MCP and show their
//! answers, so a search here is the search there.

use crate::engine::Engine;
use crate::ops::registry::{self, Operation, Scope};
use crate::ops::{self, Answer};
use crate::sources::Sources;
use anyhow::{Context, Result};
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::collections::HashMap;
use std::sync::Arc;

crate::error::errors! {
    /// A page request without what it asks about.
    pub enum RequestError: Usage {
        NoQuery {} => "a search needs a query",
        NoSymbol {} => "which symbol? (name=…)",
        NoPath {} => "which file? (path=…)",
        NotAFile { path: String } => "{path} is not a file of this view",
    }
}

const APP: &str = include_str!("app.html");
const COOKIE: &str = "lynx_ui";

pub struct Options {
    pub port: u16,
    pub open: bool,
    pub allow_write: bool,
}

struct Ui {
    sources: Arc<Sources>,
    secret: String,
    hosts: [String; 2],
    origins: [String; 2],
    allow_write: bool,
}

/// The page asks as an agent does: every source unless one is named, and nothing it has
/// written leaves the repository.
impl Scope for Ui {
    fn repository(&self) -> Result<&Engine> {
        Ok(&self.sources.main().engine)
    }
    fn sources(&self) -> Result<&Sources> {
        Ok(&self.sources)
    }
    fn all_by_default(&self) -> bool {
        true
    }
    fn confined(&self) -> bool {
        true
    }
}

/// A secret nobody else can guess: the kernel's randomness, else time and process.
fn secret() -> String {
    let mut seed = [0u8; 32];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut seed);
    }
    let mut h = blake3::Hasher::new();
    h.update(&seed);
    h.update(&crate::fsutil::now_nanos().to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.finalize().to_hex()[..32].to_string()
}

/// Runs the interface until the process is stopped. `on_ready` gets the URL to open.
/// `open` opens what it answers from: the repository and its sources, or a workspace's
/// repositories (each hit then names its repository).
pub fn serve(open: impl FnOnce() -> Result<Sources>, opts: Options, on_ready: impl FnOnce(&str)) -> Result<()> {
    crate::memory::hold(crate::memory::SERVER_IDLE);
    crate::shard::read_into_memory();
    let sources = Arc::new(open()?);
    // Working-tree answers reuse the listing until a file changes, instead of listing per request.
    let _listing = crate::watch::listing_watchers(&sources);
    // Memory freed while answering stays with the server until requests pause for a while.
    let janitor = sources.main().engine.clone();
    std::thread::spawn(move || janitor.activity.release_memory_when_idle(crate::memory::SERVER_IDLE));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port))
            .await
            .with_context(|| format!("listening on 127.0.0.1:{}", opts.port))?;
        let port = listener.local_addr()?.port();
        let secret = secret();
        let ui = Arc::new(Ui {
            sources,
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            origins: [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")],
            secret: secret.clone(),
            allow_write: opts.allow_write,
        });
        let url = format!("http://127.0.0.1:{port}/?token={secret}");
        on_ready(&url);
        if opts.open {
            open_browser(&url);
        }
        let app = Router::new()
            .route("/", get(index))
            .route("/graph", get(graph_page))
            .route("/api/overview", get(overview))
            .route("/api/revisions", get(revisions))
            .route("/api/search", get(search))
            .route("/api/symbol", get(symbol))
            .route("/api/impact", get(impact))
            .route("/api/file", get(file))
            .route("/api/config", get(config))
            .route("/api/feedback", get(feedback_state).post(feedback))
            .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
            .layer(middleware::from_fn_with_state(ui.clone(), guard))
            .with_state(ui);
        axum::serve(listener, app).await.context("serving the interface")
    })
}

fn open_browser(url: &str) {
    for opener in ["xdg-open", "open"] {
        if std::process::Command::new(opener)
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
        {
            return;
        }
    }
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], why.to_string()).into_response()
}

/// Every request: our host name, the secret (cookie or `token`), and this origin for writes.
async fn guard(State(ui): State<Arc<Ui>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !ui.hosts.iter().any(|h| h == host) {
        return refuse(StatusCode::FORBIDDEN, "unknown host: open the link `git lynx ui` printed");
    }
    let token = req.uri().query().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "token").map(|(_, v)| v.into_owned())
    });
    let cookie_ok = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| c.trim().strip_prefix(COOKIE).and_then(|r| r.strip_prefix('=')) == Some(ui.secret.as_str()));
    let token_ok = token.as_deref() == Some(ui.secret.as_str());
    if !cookie_ok && !token_ok {
        return refuse(StatusCode::FORBIDDEN, "this interface needs the secret link `git lynx ui` printed");
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !ui.origins.iter().any(|o| o == origin) {
            return refuse(StatusCode::FORBIDDEN, "cross-origin request refused");
        }
    }
    let first_visit = token_ok && !cookie_ok;
    let answering = ui.sources.main().engine.activity.answering();
    let mut resp = next.run(req).await;
    drop(answering);
    if first_visit {
        let cookie = format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", ui.secret);
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    let h = resp.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

async fn index() -> Html<&'static str> {
    Html(APP)
}

/// The `--json` envelope of an answer with its text (what MCP hands a model), for the page.
fn envelope(a: &Answer) -> serde_json::Value {
    let mut v = a.json();
    v["text"] = serde_json::Value::String(a.text.clone());
    v
}

/// Blobs every source's engine has processed for questions so far.
fn indexed_so_far(ui: &Ui) -> usize {
    ui.sources.list.iter().map(|s| s.engine.indexed_on_demand.load(std::sync::atomic::Ordering::Relaxed)).sum()
}

/// An operation run off the async threads, as its envelope. A question about a view the index
/// lacked writes that view's derived objects to the local index (`.lynx`), even read-only: the
/// envelope says how many (`indexed_now`), and the page shows it.
async fn answer(ui: Arc<Ui>, f: impl FnOnce() -> Result<Answer> + Send + 'static) -> Response {
    let before = indexed_so_far(&ui);
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(a)) => {
            let mut v = envelope(&a);
            let now = indexed_so_far(&ui) - before;
            if now > 0 {
                v["indexed_now"] = serde_json::json!(now);
            }
            Json(v).into_response()
        }
        Ok(Err(e)) => {
            let kind = crate::error::Kind::of(&e);
            let status = match kind {
                crate::error::Kind::Usage => StatusCode::BAD_REQUEST,
                crate::error::Kind::Locked => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            (status, Json(serde_json::json!({"ok": false, "error": format!("{e:#}"), "kind": kind.name()})))
                .into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({"ok": false, "error": e.to_string()})))
            .into_response(),
    }
}

type Params = Query<HashMap<String, String>>;

fn opt(p: &HashMap<String, String>, k: &str) -> Option<String> {
    p.get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn source<'a>(ui: &'a Ui, p: &HashMap<String, String>) -> Result<&'a Engine> {
    Ok(match opt(p, "source") {
        Some(s) => &ui.sources.get(&s)?.engine,
        None => &ui.sources.main().engine,
    })
}

async fn overview(State(ui): State<Arc<Ui>>) -> Response {
    answer(ui.clone(), move || {
        let mut a = ops::status::list_sources(&ui.sources)?;
        let status = ops::status::rag_status(&ui.sources, None)?;
        a.data.insert("status".into(), envelope(&status));
        a.text.push_str(&status.text);
        let feedback = ops::feedback::summary(&ops::feedback::path(&ui.sources.main().engine.ws))?;
        a.data.insert("feedback".into(), envelope(&feedback));
        Ok(a)
    })
    .await
}

async fn revisions(State(ui): State<Arc<Ui>>) -> Response {
    answer(ui.clone(), move || {
        let repo = &ui.sources.main().engine.ws.repo;
        let (branches, tags) = repo.branches_and_tags()?;
        let commits: Vec<serde_json::Value> = if repo.head()?.is_some() {
            repo.commits_in_range(None, "HEAD", 50)?
                .into_iter()
                .map(|c| serde_json::json!({"id": c.id.to_string(), "subject": c.subject, "time": c.time}))
                .collect()
        } else {
            Vec::new()
        };
        let data = serde_json::json!({"branches": branches, "tags": tags, "commits": commits, "current": repo.current_branch()?});
        Ok(Answer::new("revisions", None, data, String::new()))
    })
    .await
}

async fn search(State(ui): State<Arc<Ui>>, Query(p): Params) -> Response {
    answer(ui.clone(), move || {
        let query = opt(&p, "q").ok_or(RequestError::NoQuery {})?;
        // What the page marks in the hits: the query's words as the ranking keeps them.
        let highlight = serde_json::json!(crate::analyze::highlight_terms(&query));
        let marked = |a: Result<ops::Answer>| {
            a.map(|mut a| {
                a.data.insert("highlight".into(), highlight.clone());
                a
            })
        };
        // The page's parameter names, read into the same argument types as the command line and
        // MCP (the page keeps its short names in its links).
        let mut args = serde_json::Map::new();
        for k in p.keys() {
            let name = match k.as_str() {
                "q" => "query",
                "k" => "n_results",
                "path" => "path_contains",
                "rev" | "base" | "mode" | "glob" | "language" | "files" | "rerank" | "cursor" | "source" => k,
                _ => continue,
            };
            if let Some(v) = opt(&p, k) {
                args.insert(name.into(), serde_json::Value::String(v));
            }
        }
        if args.contains_key("base") {
            if args.get("rev").is_some_and(|r| r == "worktree") {
                args.remove("rev");
            }
            return marked(registry::call::<registry::SearchDiff>(&*ui, &args));
        }
        marked(registry::call::<registry::Search>(&*ui, &args))
    })
    .await
}

async fn symbol(State(ui): State<Arc<Ui>>, Query(p): Params) -> Response {
    answer(ui.clone(), move || {
        let name = opt(&p, "name").ok_or(RequestError::NoSymbol {})?;
        let engine = source(&ui, &p)?;
        let rev = opt(&p, "rev");
        let asked = ops::nav::SymbolArgs::new(&name, rev.as_deref());
        let mut a = ops::nav::describe_symbol(engine, &asked)?;
        let usages = ops::nav::find_usages(
            engine,
            &ops::nav::UsagesArgs { symbol: name.clone(), at: asked.at.clone(), ..Default::default() },
        )?;
        let impact = ops::nav::impact(engine, &name, rev.as_deref(), 3)?;
        let similar = ops::similar::run(
            engine,
            &ops::similar::SimilarArgs {
                snippet: Some(name.clone()),
                k: Some(ops::args::Count(5)),
                at: asked.at.clone(),
                lines: ops::args::Lines { per_hit: 0 },
                ..Default::default()
            },
        );
        let mut extra = serde_json::json!({"usages": envelope(&usages), "impact": envelope(&impact)});
        if let Ok(s) = similar {
            extra["similar"] = envelope(&s);
        }
        a.data.insert("extra".into(), extra);
        Ok(a)
    })
    .await
}

async fn impact(State(ui): State<Arc<Ui>>, Query(p): Params) -> Response {
    answer(ui.clone(), move || {
        let engine = source(&ui, &p)?;
        let range = match opt(&p, "range").as_deref() {
            None | Some("uncommitted") => ops::changes::Range::Uncommitted,
            Some("staged") => ops::changes::Range::Staged,
            Some(r) => ops::changes::ImpactRangeArgs::parse(r)?.range,
        };
        ops::changes::impact_range(
            engine,
            &ops::changes::ImpactRangeArgs { range },
            3,
            ops::changes::ImpactFormat::Markdown,
            &[],
        )
    })
    .await
}

/// One file of a view: only a path the view lists, read as the view has it (no path from the
/// request ever reaches the file system).
async fn file(State(ui): State<Arc<Ui>>, Query(p): Params) -> Response {
    answer(ui.clone(), move || {
        let path = opt(&p, "path").ok_or(RequestError::NoPath {})?;
        let engine = source(&ui, &p)?;
        let view = engine.view(&engine.spec(opt(&p, "rev").as_deref()))?;
        let f =
            view.files.iter().find(|f| f.path == path).ok_or_else(|| RequestError::NotAFile { path: path.clone() })?;
        let bytes = match &f.content {
            Some(c) => c.as_ref().clone(),
            None => crate::repo::Repo::read_blob(&engine.ws.repo.local(), f.blob)?,
        };
        let text = crate::encoding::text(&bytes).into_owned();
        Ok(Answer::new(
            "file",
            Some(view.id.clone()),
            serde_json::json!({"path": path, "lines": text.lines().count()}),
            text,
        ))
    })
    .await
}

async fn config(State(ui): State<Arc<Ui>>) -> Response {
    answer(ui.clone(), move || {
        let engine = &ui.sources.main().engine;
        let ws = &engine.ws;
        // What this process uses beside what the files say: `model.name` below is the
        // configuration's, which a flag, LYNX_MODEL or the store's record can override.
        let model = engine.model_status();
        let text = toml::to_string_pretty(&ws.config).unwrap_or_default();
        let data = serde_json::json!({
            "warnings": ws.config.warnings,
            "model": model,
            "model_line": model.line(),
            "settings": ws.config.settings(),
            "files": {
                "user file": crate::config::user_file().map(|p| p.display().to_string()),
                (crate::config::TEAM_FILE): ws.repo.workdir.as_ref().map(|w| w.join(crate::config::TEAM_FILE).display().to_string()),
                ".lynx/config.toml": ws.repo.lynx_dir.join(crate::config::LOCAL_FILE).display().to_string(),
            },
        });
        Ok(Answer::new("config", None, data, text))
    })
    .await
}

const READ_ONLY_FEEDBACK: &str =
    "this interface is read-only: start it with `git lynx ui --allow-write` to record feedback";

/// Whether this interface records feedback, and why not: the page says so before anyone types.
async fn feedback_state(State(ui): State<Arc<Ui>>) -> Response {
    let why = (!ui.allow_write).then_some(READ_ONLY_FEEDBACK);
    Json(serde_json::json!({"ok": true, "operation": "feedback", "writable": ui.allow_write, "why": why}))
        .into_response()
}

async fn feedback(State(ui): State<Arc<Ui>>, Json(f): Json<ops::feedback::FeedbackArgs>) -> Response {
    if !ui.allow_write {
        return refuse(StatusCode::FORBIDDEN, READ_ONLY_FEEDBACK);
    }
    answer(ui.clone(), move || registry::Feedback::run(&*ui, &f)).await
}

/// The graph explorer for a symbol or a module, the same page `graph export` writes.
async fn graph_page(State(ui): State<Arc<Ui>>, Query(p): Params) -> Response {
    let r = tokio::task::spawn_blocking(move || -> Result<String> {
        let args = ops::export::ExportArgs {
            symbol: opt(&p, "symbol"),
            module: opt(&p, "module"),
            at: ops::args::Rev { rev: opt(&p, "rev") },
            ..Default::default()
        };
        ops::export::page(source(&ui, &p)?, &args)
    })
    .await;
    match r {
        Ok(Ok(html)) => Html(html).into_response(),
        Ok(Err(e)) => refuse(StatusCode::BAD_REQUEST, &format!("{e:#}")),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}
