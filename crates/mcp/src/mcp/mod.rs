//! `git lynx serve`: the MCP server over stdio. It answers `initialize` at once and opens the
//! repository's views in the background; a tool call that arrives early waits up to
//! READY_WAIT, then answers with what is still loading. stdout carries only JSON-RPC; logs go
//! to stderr. Every tool renders the same text as the matching CLI command.

pub mod args;
pub mod guide;
pub mod output;
pub mod tools;

use crate::engine::{Engine, ModelChoice};
use crate::progress::Progress;
use crate::sources::Sources;
use crate::workspace::Workspace;
use anyhow::Result;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long an early tool call waits for the index before answering with progress.
pub const READY_WAIT: Duration = Duration::from_secs(20);

/// How long a tool call waits for the index to be ready: `LYNX_TOOL_WAIT_SECONDS`, else
/// READY_WAIT.
fn ready_wait() -> Duration {
    crate::env::number::<f64>(crate::env::LYNX_TOOL_WAIT_SECONDS)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(READY_WAIT)
}
pub const GUIDE_URI: &str = "lynx://guide";

pub struct ServeOptions {
    pub dir: PathBuf,
    pub profile: Option<crate::config::ToolProfile>,
    pub model: Option<String>,
    pub no_dense: bool,
    pub lynxmcp_config: Option<PathBuf>,
    /// A workspace file: the server answers across its repositories.
    pub workspace: Option<PathBuf>,
    pub watch: bool,
}

enum Load {
    Loading,
    Ready(Arc<Sources>),
    Failed(String),
}

struct Shared {
    load: Mutex<Load>,
    cond: Condvar,
    progress: Progress,
    tools: Vec<&'static tools::ToolSpec>,
    profile: crate::config::ToolProfile,
    repo_name: String,
}

#[derive(Clone)]
pub struct LynxServer {
    shared: Arc<Shared>,
}

/// Runs the server until stdin closes.
pub fn serve(opts: ServeOptions) -> Result<()> {
    // From the start, before anything is freed: the allocator fixes when freed memory goes
    // back at the first free after a quiet period, and a thread that ends frees its pages.
    crate::memory::hold(crate::memory::SERVER_IDLE);
    // A server outlives edits to its cache: shards are read, not mapped.
    crate::shard::read_into_memory();
    // Open the workspace now so that configuration and repository errors surface at once.
    let ws = Workspace::open_from_env(&opts.dir)?;
    let (profile, trusted_profile) = match (opts.profile, crate::env::get(crate::env::LYNX_TOOL_PROFILE)) {
        (Some(p), _) => (p, p),
        (None, Some(p)) => {
            let p = crate::config::ToolProfile::parse(&p)?;
            (p, p)
        }
        (None, None) => (ws.config.tools.profile, ws.config.origin.trusted_tools.profile),
    };
    let tool_list = tools::trusted_tool_list(&ws.config, profile, trusted_profile)?;
    let ws_config_serve = ws.config.serve.clone();
    let repo_name = ws
        .repo
        .workdir
        .as_ref()
        .and_then(|w| w.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into());
    let progress = Progress::hidden();
    let shared = Arc::new(Shared {
        load: Mutex::new(Load::Loading),
        cond: Condvar::new(),
        progress: progress.clone(),
        tools: tool_list,
        profile,
        repo_name,
    });
    // Background: open sources, index what is missing, warm the views.
    {
        let shared = shared.clone();
        let lynxmcp = opts.lynxmcp_config.clone().or_else(|| crate::env::path(crate::env::RAG_CONFIG_PATH));
        let model = ModelChoice::from(
            opts.model.as_deref(),
            opts.no_dense,
            &ws.config,
            true,
            ModelChoice::recorded(&ws.store.root),
        );
        let watch = opts.watch;
        let workspace = opts.workspace.clone();
        let (model_name, no_dense) = (opts.model.clone(), opts.no_dense);
        std::thread::spawn(move || {
            // Ready once every source's view is indexed and open; the graph and the dense
            // matrix warm up afterwards (a call that needs them first builds them itself).
            let result = (|| -> Result<_> {
                let sources = Arc::new(match &workspace {
                    Some(file) => {
                        let choose = |w: &crate::workspace::Workspace| {
                            let recorded = ModelChoice::recorded(&w.store.root);
                            ModelChoice::from(model_name.as_deref(), no_dense, &w.config, true, recorded)
                        };
                        Sources::open_workspace(file, &progress, &choose)?
                    }
                    None => Sources::open(
                        Arc::new(Engine::new(ws, progress.clone(), model)),
                        lynxmcp.as_deref(),
                        &progress,
                    )?,
                });
                // The views kept at recent revisions are read before the server answers, on
                // the other core while the working tree's view opens: read beside the first
                // questions instead, they took the cores from them, and a question at a
                // revision not read yet read it again itself.
                let (views, kept, listing) = std::thread::scope(|scope| {
                    let kept = scope.spawn(|| sources.list.iter().map(|s| s.engine.preload_kept()).collect::<Vec<_>>());
                    // From the first question on, working-tree answers reuse the listing until
                    // a file changes.
                    let listing = if watch { crate::watch::listing_watchers(&sources) } else { Vec::new() };
                    let views = (|| -> Result<Vec<crate::view::View>> {
                        let mut views = Vec::new();
                        for s in &sources.list {
                            let view = crate::view::View::open(&s.engine.ws, &s.engine.spec(None))?;
                            s.engine.open_listed(&view)?;
                            views.push(view);
                        }
                        Ok(views)
                    })();
                    (views, kept.join().unwrap_or_default(), listing)
                });
                let read: usize = kept.iter().map(Vec::len).sum();
                if read > 0 {
                    tracing::debug!("{read} kept views read before the first question");
                }
                Ok((sources, views?, kept, listing))
            })();
            let warm = {
                let mut load = shared.load.lock().unwrap();
                let warm = match result {
                    Ok((s, views, kept, listing)) => {
                        tracing::info!("index ready");
                        *load = Load::Ready(s.clone());
                        Some((s, views, kept, listing))
                    }
                    Err(e) => {
                        tracing::error!("could not open the index: {e:#}");
                        *load = Load::Failed(format!("{e:#}"));
                        None
                    }
                };
                shared.cond.notify_all();
                warm
            };
            if let Some((sources, views, kept, listing)) = warm {
                // What the server frees stays with it while questions come, and goes back to
                // the system once none has come for a while.
                let janitor = sources.clone();
                std::thread::spawn(move || {
                    janitor.list[0].engine.activity.release_memory_when_idle(crate::memory::SERVER_IDLE)
                });
                if watch {
                    crate::watch::spawn_for_server(sources.clone(), listing);
                }
                // Many repositories: their views are let go when idle or over the bound. Held
                // to a bound, a server warms nothing nobody asked for (questions build what
                // they need), and lets go of what it read at the start.
                let serve = sources.main().engine.ws.config.serve.clone();
                if sources.workspace.is_some() {
                    let holder = sources.clone();
                    let secs = |s: u64| (s > 0).then(|| std::time::Duration::from_secs(s));
                    let bound = (serve.max_memory_mb > 0).then_some(serve.max_memory_mb << 20);
                    std::thread::spawn(move || holder.hold_memory(secs(serve.release_idle_s), bound));
                    if bound.is_some() {
                        return;
                    }
                }
                for (s, view) in sources.list.iter().zip(&views) {
                    s.engine.activity.touch();
                    if let Ok(opened) = s.engine.open_listed(view) {
                        s.engine.activity.before_warm_up();
                        if s.graph {
                            let _ = s.engine.graph(view, &opened.data);
                        }
                        let _ = s.engine.dense_for(view, &opened.data);
                    }
                    // What the warm-up freed is given back after the same idle time.
                    s.engine.activity.touch();
                }
                for (s, read) in sources.list.iter().zip(&kept) {
                    s.engine.warm_kept_dense(read);
                }
            }
        });
    }
    let max_request = max_request_bytes(&ws_config_serve)?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async move {
        let server = LynxServer { shared };
        let (transport, writer) = checked_stdio(max_request);
        let result = match server.serve(transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
                Ok(())
            }
            // stdin closed before `initialize`: nothing to serve, not an error.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(anyhow::anyhow!("MCP handshake failed: {e}")),
        };
        // Everything the server answered reaches stdout before the process ends.
        let _ = writer.await;
        result
    })
}

/// The largest request line `serve` reads, in bytes: `LYNX_MAX_REQUEST_MB`, else
/// `serve.max_request_mb` from the user's or the local file.
fn max_request_bytes(config: &crate::config::ServeConfig) -> Result<usize> {
    let mb = match crate::env::get(crate::env::LYNX_MAX_REQUEST_MB) {
        Some(v) => match v.trim().parse::<u64>() {
            Ok(mb) if (1..=crate::config::MAX_REQUEST_MB).contains(&mb) => mb,
            _ => anyhow::bail!(
                "{} must be a whole number of MiB from 1 to {} (got `{v}`)",
                crate::env::LYNX_MAX_REQUEST_MB,
                crate::config::MAX_REQUEST_MB
            ),
        },
        None => config.max_request_mb,
    };
    Ok((mb as usize) << 20)
}

/// How one bounded read of a request line ended.
enum LineRead {
    /// A whole line (or the last one, without its newline) is in the buffer.
    Line,
    /// The line is longer than the limit: the buffer holds its first `limit` bytes, and
    /// `ended` says whether its newline was read too (else the rest is still to be skipped).
    TooLong {
        ended: bool,
    },
    Eof,
}

/// Reads one line into `line`, never holding more than `max` bytes of it (`read_until` would
/// hold a line of any length before it could be judged).
async fn read_bounded<R: tokio::io::AsyncBufRead + Unpin>(
    r: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    use tokio::io::AsyncBufReadExt;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() { LineRead::Eof } else { LineRead::Line });
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let content = newline.unwrap_or(buf.len());
        if line.len() + content > max {
            let room = max - line.len();
            line.extend_from_slice(&buf[..room]);
            let used = newline.map_or(buf.len(), |i| i + 1);
            r.consume(used);
            return Ok(LineRead::TooLong { ended: newline.is_some() });
        }
        line.extend_from_slice(&buf[..content]);
        let used = newline.map_or(buf.len(), |i| i + 1);
        r.consume(used);
        if newline.is_some() {
            return Ok(LineRead::Line);
        }
    }
}

/// Finds the `id` of a JSON-RPC request in a stream of its bytes, without holding them: the
/// value of the key `id` at the top level of the object, when it is a number or a string.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The first bytes of the string being read at the top level (a key, if a `:` follows).
    key: Vec<u8>,
    /// A top-level string just ended: whether it was `"id"`, until the next byte that is not
    /// white space tells whether it was a key.
    after_key: Option<bool>,
    /// The id's value being read.
    value: Option<Vec<u8>>,
    /// The id, once read; `done` when the scan has nothing more to learn.
    found: Option<serde_json::Value>,
    done: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.done {
                return;
            }
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if let Some(v) = &mut self.value {
            let in_string = v.first() == Some(&b'"');
            let ends = if in_string {
                // Every byte here follows the opening quote.
                let end = b == b'"' && !self.escaped;
                self.escaped = !self.escaped && b == b'\\';
                v.push(b);
                end
            } else if v.is_empty() && b.is_ascii_whitespace() {
                false
            } else if matches!(b, b',' | b'}') || b.is_ascii_whitespace() {
                true
            } else {
                v.push(b);
                false
            };
            if v.len() > 1024 {
                self.done = true;
            } else if ends {
                self.found =
                    serde_json::from_slice::<serde_json::Value>(v).ok().filter(|id| id.is_number() || id.is_string());
                self.done = true;
            }
            return;
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 1 {
                    self.after_key = Some(self.key == b"id");
                }
                return;
            }
            if self.depth == 1 && self.key.len() < 3 {
                self.key.push(b);
            }
            return;
        }
        if b.is_ascii_whitespace() {
            return;
        }
        let was_id = self.after_key.take() == Some(true);
        match b {
            b':' if was_id && self.depth == 1 => self.value = Some(Vec::new()),
            b'"' => {
                self.in_string = true;
                self.key.clear();
            }
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.done = true;
                }
            }
            _ => {}
        }
    }
}

/// The refusal of a request line over `max` bytes.
fn too_large(id: serde_json::Value, max: usize) -> Vec<u8> {
    rpc_error(
        id,
        -32600,
        format!(
            "Invalid Request: the request is longer than the {} MiB a request may take, and was not read; send \
             smaller arguments (the limit is serve.max_request_mb in your configuration file, or {})",
            max >> 20,
            crate::env::LYNX_MAX_REQUEST_MB
        ),
    )
}

/// The JSON-RPC error object for a message that never reaches the server.
fn rpc_error(id: serde_json::Value, code: i64, message: String) -> Vec<u8> {
    let mut line = serde_json::to_vec(
        &serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// Stdio for the server, with the checks JSON-RPC asks of every incoming line done before the
/// MCP library sees it: a line that is not JSON (or not UTF-8) is answered with a parse error
/// (-32700, `id: null`) and a `tools/call` without its parameters with invalid params
/// (-32602); the library would drop the first and misreport the second. One writer owns
/// stdout, so these answers never interleave with the server's. Returns the transport and the
/// writer task (done once the server's output is flushed).
fn checked_stdio(
    max: usize,
) -> (
    rmcp::transport::async_rw::AsyncRwTransport<RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>,
    tokio::task::JoinHandle<()>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    const BUF: usize = 1 << 20;
    let (server_in, mut to_server) = tokio::io::duplex(BUF);
    let (mut from_server, server_out) = tokio::io::duplex(BUF);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let errors = tx.clone();
    tokio::spawn(async move {
        let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_bounded(&mut stdin, &mut line, max).await {
                Ok(LineRead::Eof) | Err(_) => break,
                Ok(LineRead::Line) => {}
                Ok(LineRead::TooLong { ended }) => {
                    // Refused with its id as soon as the id is known, and the rest of the line
                    // skipped unread, so the next request is answered at once.
                    let mut scan = IdScan::default();
                    scan.feed(&line);
                    line = Vec::new();
                    let mut answered = false;
                    let answer = |scan: &IdScan, answered: &mut bool| {
                        if !*answered {
                            *answered = true;
                            let _ = errors.send(too_large(scan.found.clone().unwrap_or_default(), max));
                        }
                    };
                    if scan.done {
                        answer(&scan, &mut answered);
                    }
                    let mut ended = ended;
                    while !ended {
                        let Ok(buf) = stdin.fill_buf().await else { break };
                        if buf.is_empty() {
                            break;
                        }
                        let newline = buf.iter().position(|&b| b == b'\n');
                        let part = &buf[..newline.unwrap_or(buf.len())];
                        if !answered {
                            scan.feed(part);
                            if scan.done {
                                answer(&scan, &mut answered);
                            }
                        }
                        let used = newline.map_or(buf.len(), |i| i + 1);
                        stdin.consume(used);
                        ended = newline.is_some();
                    }
                    answer(&scan, &mut answered);
                    if !ended {
                        break;
                    }
                    continue;
                }
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let parsed = std::str::from_utf8(text)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<serde_json::Value>(t).map_err(|e| e.to_string()));
            let msg = match parsed {
                Ok(v) => v,
                Err(e) => {
                    let _ = errors.send(rpc_error(serde_json::Value::Null, -32700, format!("Parse error: {e}")));
                    continue;
                }
            };
            if msg.get("method").and_then(|m| m.as_str()) == Some("tools/call")
                && !msg.get("params").is_some_and(|p| p.is_object())
            {
                if let Some(id) = msg.get("id") {
                    let _ = errors.send(rpc_error(
                        id.clone(),
                        -32602,
                        "Invalid params: tools/call needs params with the tool's `name` and its `arguments`".into(),
                    ));
                }
                continue;
            }
            if to_server.write_all(text).await.is_err() || to_server.write_all(b"\n").await.is_err() {
                break;
            }
        }
        // Dropping the pipe tells the server its client has gone.
    });
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(&mut from_server);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line.clone()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    // What reaches the server has passed the bound above (one more byte for its newline).
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(server_in, server_out)
        .with_max_line_length(max.saturating_add(1));
    (transport, writer)
}

impl LynxServer {
    /// Waits up to `wait` for the index; Err(message) says what is still loading.
    fn sources(&self, wait: Duration) -> std::result::Result<Arc<Sources>, String> {
        let s = &self.shared;
        let load = s.load.lock().unwrap();
        let (load, _) = s.cond.wait_timeout_while(load, wait, |l| matches!(l, Load::Loading)).unwrap();
        match &*load {
            Load::Ready(src) => Ok(src.clone()),
            Load::Failed(e) => Err(format!("Lynx could not open the index of {}: {e}", s.repo_name)),
            Load::Loading => {
                let what = s.progress.describe();
                Err(format!(
                    "Lynx is still preparing the index of {}{}; retry in a few seconds.",
                    s.repo_name,
                    if what.is_empty() { String::new() } else { format!(" ({what} files)") }
                ))
            }
        }
    }

    fn tool_defs(&self) -> Vec<Tool> {
        self.shared
            .tools
            .iter()
            .map(|t| {
                let schema = match (t.schema)() {
                    serde_json::Value::Object(m) => m,
                    _ => JsonObject::new(),
                };
                // Every tool returns the envelope `--json` prints, described by its result types.
                let output = match (t.output)() {
                    serde_json::Value::Object(m) => m,
                    _ => JsonObject::new(),
                };
                Tool::new(t.name, t.description, Arc::new(schema))
                    .with_raw_output_schema(Arc::new(output))
                    .with_annotations(ToolAnnotations::new().read_only(t.read_only))
            })
            .collect()
    }

    fn instructions(&self) -> String {
        let sources = match &*self.shared.load.lock().unwrap() {
            Load::Ready(s) => Some(s.clone()),
            _ => None,
        };
        guide::instructions(&self.shared.tools, sources.as_deref(), &self.shared.repo_name, self.shared.profile)
    }
}

impl ServerHandler for LynxServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("git-lynx", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tool_defs()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.shared.tools.iter().any(|t| t.name == name) {
            return Err(McpError::invalid_params(
                format!("tool not found: {name} (profile `{}`)", self.shared.profile),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let me = self.clone();
        let res = tokio::task::spawn_blocking(move || {
            let not_ready = |msg: String| {
                let mut r = CallToolResult::error(vec![ContentBlock::text(msg.clone())]);
                r.structured_content = Some(serde_json::json!({"ok": false, "operation": name, "error": msg, "kind": "failure"}));
                r
            };
            let sources = match me.sources(ready_wait()) {
                Ok(s) => s,
                Err(msg) => return not_ready(msg),
            };
            let _answering: Vec<_> = sources.list.iter().map(|s| s.engine.activity.answering()).collect();
            let repo = &sources.main().engine.ws.repo;
            let root = repo.workdir.clone().unwrap_or_else(|| repo.common_dir.clone());
            if !repo.common_dir.is_dir() || !root.is_dir() {
                return not_ready(format!(
                    "error: the repository at {} no longer exists (deleted or moved); start `git lynx serve` again in the repository",
                    root.display()
                ));
            }
            // The text for the model, and beside it the same JSON `--json` prints.
            match tools::call(&name, &args, &sources) {
                Ok(answer) => {
                    let text = crate::ops::page::for_mcp(&answer.text).into_owned();
                    // Clients hand the model one of the two parts: the structured one is never a
                    // second, larger answer.
                    let budget = crate::ops::page::structured_budget(text.len());
                    let structured = crate::ops::page::fit_structured(answer.json(), budget);
                    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                    r.structured_content = Some(structured);
                    r
                }
                Err(e) => {
                    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("error: {e:#}"))]);
                    r.structured_content = Some(crate::ops::failure_json(&name, &e));
                    r
                }
            }
        })
        .await
        .map_err(|e| McpError::internal_error(format!("tool task failed: {e}"), None))?;
        Ok(res.into())
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(GUIDE_URI, "guide")
                .with_title("How to use Lynx in this repository")
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri.as_str() != GUIDE_URI {
            return Err(McpError::resource_not_found(format!("no resource {}", request.uri), None));
        }
        let me = self.clone();
        let text = tokio::task::spawn_blocking(move || {
            let sources = me.sources(Duration::from_millis(0)).ok();
            guide::guide(&me.shared.tools, sources.as_deref(), &me.shared.repo_name, me.shared.profile)
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, GUIDE_URI).with_mime_type("text/markdown")])
            .into())
    }
}

#[cfg(test)]
mod tests {
    use super::IdScan;
    use serde_json::{Value, json};

    fn id_of(line: &str, chunk: usize) -> Option<Value> {
        let mut scan = IdScan::default();
        for part in line.as_bytes().chunks(chunk) {
            scan.feed(part);
        }
        scan.found
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is_and_only_there() {
        for chunk in [1, 3, 1000] {
            assert_eq!(id_of(r#"{"jsonrpc":"2.0","id":77,"method":"x"}"#, chunk), Some(json!(77)));
            assert_eq!(id_of(r#"{"params":{"id":1,"q":"a\"id\":"},"id" : "s\"1"}"#, chunk), Some(json!("s\"1")));
            assert_eq!(id_of(r#"{"method":"x","params":{"arguments":{"id":5}}}"#, chunk), None);
            assert_eq!(id_of(r#"{"id":null,"method":"x"}"#, chunk), None);
            assert_eq!(id_of(r#"{"id":"","method":"x"}"#, chunk), Some(json!("")));
            assert_eq!(id_of(r#"{"ids":3,"id":-4}"#, chunk), Some(json!(-4)));
            assert_eq!(id_of("xxxxxxxx", chunk), None);
        }
    }
}
