//! Keeping the working-tree view fresh: `git lynx watch` and `serve` react to saves, creates,
//! deletes and renames (notify), debounced — wait for the first event, then drain until a
//! quiet period — and index only the new blobs. Changes to `.git/HEAD` or `.git/index`
//! (branch switches, rebases, pulls, staging) trigger the same update. One process per store
//! watches (the `watch.lock` file lock); others follow its results and take over when it exits.
//! At start, a reconcile catches up with what changed while nobody watched.

use crate::engine::Engine;
use crate::ops::status::WATCH_LOCK;
use crate::sources::Sources;
use crate::store::lock::StoreLock;
use anyhow::{Context, Result};
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// What one update did.
#[derive(Debug, serde::Serialize)]
pub struct Update {
    pub reason: String,
    pub blobs_new: usize,
    pub chunks_embedded: usize,
    pub files: usize,
    /// Listing the working tree and indexing what changed (the catch-up itself).
    pub catch_up_millis: f64,
    /// Including assembling the view, its graph and its dense side.
    pub millis: f64,
}

/// Brings the working-tree view of `engine` up to date (objects, assembled view, graph, vectors).
pub fn update(engine: &Engine, reason: &str) -> Result<Update> {
    let t = Instant::now();
    let view = crate::view::View::open(&engine.ws, &engine.spec(None))?;
    let report = crate::index::index_view(&engine.ws, &view, &engine.progress)?;
    let catch_up_millis = t.elapsed().as_secs_f64() * 1000.0;
    let mut embedded = 0;
    if let Ok(model) = engine.embedder()
        && let Ok(d) = crate::index::embed::embed_view(&engine.ws.store, &view, model.as_ref(), &engine.progress)
    {
        embedded = d.embedded;
    }
    let opened = engine.open_listed(&view)?;
    // The graph and the dense side are warmed for later questions, not needed by any now: in a
    // server they wait for a pause in the questions (a question that needs them builds them).
    let waited = Instant::now();
    engine.activity.before_warm_up();
    let waited = waited.elapsed();
    let _ = engine.graph(&view, &opened.data);
    let _ = engine.dense_for(&view, &opened.data);
    Ok(Update {
        reason: reason.to_string(),
        blobs_new: report.blobs_new,
        chunks_embedded: embedded,
        files: view.files.len(),
        catch_up_millis,
        millis: (t.elapsed() - waited).as_secs_f64() * 1000.0,
    })
}

/// Whether an event path can change the working-tree view.
fn relevant(root: &Path, git_dir: &Path, p: &Path) -> bool {
    if p.starts_with(git_dir) {
        // HEAD moves and index rewrites change the view; everything else in .git does not.
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        return matches!(name, "HEAD" | "index" | "ORIG_HEAD") || p.components().any(|c| c.as_os_str() == "refs");
    }
    let rel = p.strip_prefix(root).unwrap_or(p);
    !rel.starts_with(".lynx") && !rel.starts_with(".git")
}

/// Waits for the first relevant event, then drains until `quiet` passes without one. A trailing
/// quiet period, not notify-debouncer-full's fixed delay per event: that one releases the first
/// saves of a longer burst while later ones still arrive, so one burst became several updates.
/// Returns None when the channel closed or `stop` says so.
fn next_batch(
    rx: &Receiver<notify::Result<notify::Event>>,
    root: &Path,
    git_dir: &Path,
    quiet: Duration,
    stop: &dyn Fn() -> bool,
) -> Option<usize> {
    let is_relevant = |ev: &notify::Event| {
        !matches!(ev.kind, EventKind::Access(_)) && ev.paths.iter().any(|p| relevant(root, git_dir, p))
    };
    loop {
        if stop() {
            return None;
        }
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(Ok(ev)) if is_relevant(&ev) => break,
            Ok(_) => continue,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
    let mut n = 1;
    let mut last = Instant::now();
    loop {
        let left = quiet.saturating_sub(last.elapsed());
        if left.is_zero() {
            return Some(n);
        }
        match rx.recv_timeout(left) {
            Ok(Ok(ev)) if is_relevant(&ev) => {
                n += 1;
                last = Instant::now();
            }
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => return Some(n),
            Err(RecvTimeoutError::Disconnected) => return Some(n),
        }
    }
}

/// A watcher of the working tree at `root` (and of `git_dir` itself when it is elsewhere, as
/// for a linked worktree) that never follows a symbolic link: a committed link to a folder
/// outside the repository must not make Lynx watch, or report writes in, that folder. A tree of
/// more than `max_dirs` folders is not watched (one kernel watch each), with an error that
/// names the setting.
fn watch_tree(
    handler: impl notify::EventHandler,
    root: &Path,
    git_dir: &Path,
    max_dirs: usize,
) -> Result<notify::RecommendedWatcher> {
    let dirs = count_dirs(root, max_dirs);
    if dirs > max_dirs {
        anyhow::bail!(
            "{} has more than {max_dirs} folders to watch (watch.max_dirs); not watching it, so changes are seen \
             when a question lists the working tree; raise watch.max_dirs in .lynx/config.toml or your own \
             configuration file to watch it",
            root.display()
        );
    }
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = notify::RecommendedWatcher::new(handler, config).context("starting the file watcher")?;
    watcher.watch(root, RecursiveMode::Recursive).with_context(|| format!("watching {}", root.display()))?;
    if !git_dir.starts_with(root) {
        // Linked worktrees keep their HEAD and index outside the checkout.
        watcher.watch(git_dir, RecursiveMode::NonRecursive).ok();
    }
    Ok(watcher)
}

/// Folders under `root`, itself included, as a recursive watch walks them (links not
/// followed), counting no further than `max + 1`.
fn count_dirs(root: &Path, max: usize) -> usize {
    let mut n = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        n += 1;
        if n > max {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    n
}

/// Watches `engine`'s working tree until `stop` returns true, calling `on_update` after each
/// update. Holds the store's watch lock while doing so.
pub fn watch_loop(
    engine: &Engine,
    debounce: Duration,
    stop: &dyn Fn() -> bool,
    on_update: &mut dyn FnMut(&Update),
) -> Result<()> {
    let root = engine.ws.repo.workdir()?.to_path_buf();
    let git_dir = engine.ws.repo.local().git_dir().canonicalize().unwrap_or_else(|_| root.join(".git"));
    let (tx, rx) = channel();
    let _watcher = watch_tree(tx, &root, &git_dir, engine.ws.config.watch.max_dirs)?;
    // Reconcile: catch up with what changed while nobody watched.
    let u = update(engine, "reconcile at start")?;
    on_update(&u);
    // A deleted checkout sends no more events worth waiting for: stop instead of lingering.
    let gone = || !root.exists();
    let stop_or_gone = || stop() || gone();
    while let Some(events) = next_batch(&rx, &root, &git_dir, debounce, &stop_or_gone) {
        if gone() {
            break;
        }
        match update(engine, &format!("{events} change events")) {
            Ok(u) => on_update(&u),
            Err(e) => tracing::warn!("update after changes failed: {e:#}"),
        }
    }
    if gone() {
        tracing::warn!("{} no longer exists; stopped watching", root.display());
    }
    Ok(())
}

/// `git lynx watch`: watch when no other process does; otherwise follow until it exits.
pub fn run_cli(engine: &Engine, debounce: Duration, json: bool) -> Result<()> {
    let root = engine.ws.store.root.clone();
    let print = |u: &Update| {
        if json {
            println!("{}", serde_json::to_string(u).unwrap_or_default());
        } else {
            eprintln!(
                "{}: {} new blobs, {} chunks embedded, {} files, {:.0} ms",
                u.reason, u.blobs_new, u.chunks_embedded, u.files, u.millis
            );
        }
    };
    loop {
        match StoreLock::try_acquire(&root, WATCH_LOCK, "watch")? {
            Some(_lock) => {
                if !json {
                    eprintln!("watching {} (Ctrl-C to stop)", engine.ws.repo.workdir()?.display());
                }
                let mut p = print;
                return watch_loop(engine, debounce, &|| false, &mut p);
            }
            None => {
                let holder = StoreLock::holder(&root, WATCH_LOCK).unwrap_or_else(|| "another process".into());
                if !json {
                    eprintln!(
                        "{holder} is already watching this repository; following it and taking over when it exits"
                    );
                }
                while StoreLock::holder(&root, WATCH_LOCK).is_some() {
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }
}

/// For `serve`: the indexing watch loop in the process that holds the store's watch lock (the
/// others follow and take over when it exits), keeping `listing` alive beside it — the watcher
/// that only invalidates the cached working-tree listing ([`listing_watcher`]), which every
/// server sets up before it answers, so answers always see saved edits.
pub fn spawn_for_server(sources: Arc<Sources>, listing: Vec<notify::RecommendedWatcher>) {
    let engine: Arc<Engine> = sources.main().engine.clone();
    if engine.folder.is_some() || engine.ws.repo.workdir.is_none() {
        return;
    }
    engine.activity.touch();
    std::thread::spawn(move || {
        let _keep = listing;
        // The updates start in the first pause of the questions: the loop's own watch on every
        // directory and its catch-up listing took the cores from a server's first questions.
        // The catch-up after its watches are set sees every change made before.
        engine.activity.before_warm_up();
        let root: PathBuf = engine.ws.store.root.clone();
        let debounce = Duration::from_millis(engine.ws.config.watch.debounce_ms);
        loop {
            match StoreLock::try_acquire(&root, WATCH_LOCK, "serve (watching)") {
                Ok(Some(_lock)) => {
                    let mut log =
                        |u: &Update| tracing::info!("{}: {} new blobs in {:.0} ms", u.reason, u.blobs_new, u.millis);
                    if let Err(e) = watch_loop(&engine, debounce, &|| false, &mut log) {
                        tracing::warn!("watcher stopped: {e:#}");
                    }
                    return;
                }
                Ok(None) => std::thread::sleep(Duration::from_secs(2)),
                Err(e) => {
                    tracing::warn!("cannot take the watch lock: {e:#}");
                    return;
                }
            }
        }
    });
}

/// A watcher that only tells `engine` when the working tree changed, so its working-tree
/// listing is reused between changes (the fence keeps every answer as new as the last save).
/// Keep it alive as long as the engine answers; None (with a warning) when watching fails, and
/// every question then lists the working tree itself.
pub fn listing_watcher(engine: &Arc<Engine>) -> Option<notify::RecommendedWatcher> {
    if engine.folder.is_some() || engine.ws.repo.workdir.is_none() {
        return None;
    }
    match invalidation_watcher(engine) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!("file watching unavailable ({e:#}); every call re-lists the working tree");
            None
        }
    }
}

/// A listing watcher for every repository the sources answer from at their working tree (a
/// workspace's repositories, not a pinned revision's): without one, each question stats every
/// tracked file of each repository again.
pub fn listing_watchers(sources: &Sources) -> Vec<notify::RecommendedWatcher> {
    sources.list.iter().filter(|s| s.engine.pinned.is_none()).filter_map(|s| listing_watcher(&s.engine)).collect()
}

/// A barrier through the file watcher's event queue. A query that wants to reuse the cached
/// working-tree listing first creates a marker file inside the watched tree and waits until
/// the watcher has seen it: the kernel queues a watch's events in order, so by then every change
/// saved before the query has bumped the working-tree generation. Without it, a question asked
/// right after a save could be answered from the listing before the save.
struct Fence {
    dir: PathBuf,
    next: std::sync::atomic::AtomicU64,
    seen: std::sync::Mutex<u64>,
    cv: std::sync::Condvar,
}

/// How long a query waits for its marker's event before listing the working tree itself.
const FENCE_WAIT: Duration = Duration::from_millis(500);

impl Fence {
    fn new(dir: PathBuf) -> Result<Fence> {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Fence { dir, next: Default::default(), seen: Default::default(), cv: Default::default() })
    }

    fn observe(&self, p: &Path) {
        if p.parent() != Some(self.dir.as_path()) {
            return;
        }
        let n = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("fence-"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(n) = n {
            let mut seen = self.seen.lock().unwrap();
            if n > *seen {
                *seen = n;
                self.cv.notify_all();
            }
        }
    }

    /// Whether every change saved before this call has reached the watcher (false when the
    /// marker could not be written or its event did not arrive in time).
    fn pass(&self) -> bool {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::AcqRel) + 1;
        let marker = self.dir.join(format!("fence-{n}"));
        if std::fs::write(&marker, b"").is_err() {
            return false;
        }
        let deadline = Instant::now() + FENCE_WAIT;
        let mut seen = self.seen.lock().unwrap();
        while *seen < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            seen = self.cv.wait_timeout(seen, left).unwrap().0;
        }
        let ok = *seen >= n;
        drop(seen);
        let _ = std::fs::remove_file(&marker);
        ok
    }
}

/// Bumps `engine.worktree_gen` on every relevant change, immediately (no debounce), and
/// installs the fence that lets queries reuse the listing between changes. When the store is
/// outside the watched checkout there is no fence, and every query lists the working tree.
fn invalidation_watcher(engine: &Arc<Engine>) -> Result<notify::RecommendedWatcher> {
    use std::sync::atomic::Ordering;
    let root = engine.ws.repo.workdir()?.to_path_buf();
    let git_dir = engine.ws.repo.local().git_dir().canonicalize().unwrap_or_else(|_| root.join(".git"));
    let store = engine.ws.store.root.canonicalize().unwrap_or_else(|_| engine.ws.store.root.clone());
    let root_c = root.canonicalize().unwrap_or_else(|_| root.clone());
    let fence = if store.starts_with(&root_c) { Some(Arc::new(Fence::new(store.join("watch"))?)) } else { None };
    let generation = engine.worktree_gen.clone();
    let (r, g, f) = (root.clone(), git_dir.clone(), fence.clone());
    let w = watch_tree(
        move |ev: notify::Result<notify::Event>| {
            if let Ok(ev) = ev {
                if let Some(f) = &f {
                    ev.paths.iter().for_each(|p| f.observe(p));
                }
                if !matches!(ev.kind, EventKind::Access(_)) && ev.paths.iter().any(|p| relevant(&r, &g, p)) {
                    generation.fetch_add(1, Ordering::AcqRel);
                }
            }
        },
        &root,
        &git_dir,
        engine.ws.config.watch.max_dirs,
    )?;
    if let Some(f) = fence
        && engine.fence.set(Box::new(move || f.pass())).is_ok()
    {
        engine.watching.store(true, Ordering::Release);
    }
    Ok(w)
}
