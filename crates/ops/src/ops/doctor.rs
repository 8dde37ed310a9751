//! `doctor`: one command to diagnose problems — why a file is or is not indexed, whether ONNX
//! Runtime and the model load, whether the store is intact (segments re-hashed, catalogs
//! against segments; `--repair` quarantines damaged segments and rebuilds catalogs and view
//! caches from what is left), disk space and lock holders. Exit 0 when nothing is broken
//! (warnings, such as being offline, are reported but do not fail it unless `--strict`), 1 when
//! a check failed.

use super::Answer;
use crate::engine::Engine;
use crate::lang;
use crate::layer;
use crate::store::lock::StoreLock;
use crate::store::{list_segments, pack};
use anyhow::Result;
use serde::Serialize;
use std::collections::HashSet;

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: String,
    /// ok | warn | error
    pub status: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn check(name: &str, status: &'static str, message: impl Into<String>, fix: Option<&str>) -> Check {
    Check { name: name.into(), status, message: message.into(), fix: fix.map(String::from) }
}

/// What `doctor` is asked to check and do.
#[derive(clap::Args, Debug, Default)]
pub struct DoctorArgs {
    /// Exit 1 on warnings too (being offline, a missing model, an ignored setting).
    #[arg(long)]
    pub strict: bool,
    /// Explain this file.
    #[arg(long)]
    pub path: Option<String>,
    /// Quarantine damaged segments, rebuild catalogs, remove damaged shards.
    #[arg(long)]
    pub repair: bool,
    /// Also check every object of the working tree's blobs by processing the blobs again.
    #[arg(long)]
    pub verify: bool,
}

/// The report, with its exit code (also as `exit_code`): failed checks are a failure; warnings
/// only with `strict`.
pub fn run(engine: &Engine, args: &DoctorArgs) -> Result<Answer> {
    let DoctorArgs { strict, ref path, repair, verify } = *args;
    let path = path.as_deref();
    let mut checks = Vec::new();
    if let Some(p) = path {
        checks.extend(explain_file(engine, p)?);
    }
    for w in &engine.ws.config.warnings {
        checks.push(check(
            "configuration",
            "warn",
            w.clone(),
            Some("remove the key from lynx.toml, or set it in .lynx/config.toml if you trust it"),
        ));
    }
    checks.extend(runtime_checks(engine));
    checks.extend(store_checks(engine, repair)?);
    checks.extend(snapshot_checks(engine, repair)?);
    if verify {
        checks.push(verify_check(engine, repair)?);
    }
    checks.push(writable_check(&engine.ws.store.root));
    checks.push(disk_check(&engine.ws.store.root));
    for (lock, what) in [("lock", "store writer"), (crate::ops::status::WATCH_LOCK, "watcher")] {
        match StoreLock::holder(&engine.ws.store.root, lock) {
            Some(h) => checks.push(check(what, "ok", format!("held by {h}"), None)),
            None => checks.push(check(what, "ok", "none", None)),
        }
    }
    let status = if checks.iter().any(|c| c.status == "error") {
        "error"
    } else if checks.iter().any(|c| c.status == "warn") {
        "warn"
    } else {
        "ok"
    };
    let code = match status {
        "error" => crate::error::EXIT_FAILURE,
        "warn" if strict => crate::error::EXIT_FAILURE,
        _ => 0,
    };
    let mut text = String::new();
    for c in &checks {
        let mark = match c.status {
            "ok" => "ok  ",
            "warn" => "WARN",
            _ => "FAIL",
        };
        text.push_str(&format!("[{mark}] {}: {}\n", c.name, c.message));
        if let Some(f) = &c.fix {
            text.push_str(&format!("       fix: {f}\n"));
        }
    }
    text.push_str(match (status, strict) {
        ("ok", _) => "all green\n",
        ("warn", false) => "warnings only: nothing is broken\n",
        ("warn", true) => "warnings (exit 1 with --strict)\n",
        _ => "checks failed (exit 1)\n",
    });
    Ok(Answer::new("doctor", None, Report { status, checks, exit_code: code }, text).with_exit(code))
}

/// Every check, the worst status among them and the exit code it makes.
#[derive(Debug, Serialize)]
pub struct Report {
    /// ok | warn | error
    pub status: &'static str,
    pub checks: Vec<Check>,
    pub exit_code: i32,
}

results!(Report => "checks");

/// Each documentation source's pointer to its current snapshot: damaged, answers fall back to
/// the newest snapshot; `--repair` records that one again.
fn snapshot_checks(engine: &Engine, repair: bool) -> Result<Vec<Check>> {
    use crate::docsource::Current;
    let ws = &engine.ws;
    let mut out = Vec::new();
    for sc in ws.config.sources.iter().filter(|s| s.kind != crate::config::SourceType::Folder) {
        let name = format!("{} source `{}`", sc.kind.name(), sc.name);
        let update = format!("git lynx update-source-index {}", sc.name);
        match crate::docsource::current(ws, &sc.name) {
            Current::Id(id) => out.push(check(&name, "ok", format!("current snapshot {id}"), None)),
            Current::None => out.push(check(&name, "warn", "never fetched", Some(update.as_str()))),
            Current::Damaged { newest, why } if repair => match crate::docsource::repair_current(ws, &sc.name)? {
                Some(id) => {
                    out.push(check(&name, "ok", format!("{why}; repaired: the current snapshot is {id} again"), None))
                }
                None => out.push(check(
                    &name,
                    "error",
                    format!(
                        "{why}; no snapshot is left{}",
                        newest.map(|n| format!(" (newest: {n})")).unwrap_or_default()
                    ),
                    Some(update.as_str()),
                )),
            },
            Current::Damaged { newest: Some(id), why } => out.push(check(
                &name,
                "error",
                format!("{why}; answers use the newest snapshot, {id}"),
                Some("git lynx doctor --repair"),
            )),
            Current::Damaged { newest: None, why } => {
                out.push(check(&name, "error", format!("{why}; no snapshot is left"), Some(update.as_str())))
            }
        }
    }
    Ok(out)
}

/// What the documentation sources' current snapshots say about `path` (a URL, or a PDF file
/// named relative to its source, or by a path that ends with that name).
fn explain_document(ws: &crate::workspace::Workspace, path: &str) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    let matches = |target: &str| !target.is_empty() && (path == target || path.ends_with(&format!("/{target}")));
    for sc in ws.config.sources.iter().filter(|s| s.kind != crate::config::SourceType::Folder) {
        let Some(snap) = crate::docsource::load(ws, &sc.name, None)? else { continue };
        let name = format!("{} source `{}`: {path}", sc.kind.name(), sc.name);
        let pages: Vec<&crate::docsource::Page> = snap
            .pages
            .iter()
            .filter(|p| matches(&p.path) || crate::docsource::pdf_page(&p.path).is_some_and(|(f, _)| matches(f)))
            .collect();
        if !pages.is_empty() {
            out.push(check(
                &name,
                "ok",
                format!(
                    "indexed: {} page{} in snapshot {}",
                    pages.len(),
                    if pages.len() == 1 { "" } else { "s" },
                    snap.id
                ),
                None,
            ));
        }
        for p in snap.skipped.iter().filter(|p| matches(&p.target)) {
            out.push(check(&name, "ok", format!("not indexed: {}", p.reason), None));
        }
        for p in snap.failures.iter().filter(|p| matches(&p.target)) {
            out.push(check(
                &name,
                "warn",
                format!("not indexed: {}", p.reason),
                Some("fix the page or file, then `git lynx update-source-index` again"),
            ));
        }
    }
    Ok(out)
}

fn explain_file(engine: &Engine, path: &str) -> Result<Vec<Check>> {
    let ws = &engine.ws;
    let mut out = explain_document(ws, path.trim_start_matches("./"))?;
    if !out.is_empty() || path.starts_with("http://") || path.starts_with("https://") {
        if out.is_empty() {
            out.push(check(
                &format!("page {path}"),
                "warn",
                "no documentation source's current snapshot has this URL",
                Some("`git lynx list-sources` shows the sources and their last crawl"),
            ));
        }
        return Ok(out);
    }
    let outside = |why: &str| {
        check(
            &format!("file {path}"),
            "warn",
            format!("is outside the repository ({why}); Lynx indexes only the repository's own files"),
            Some("name a path inside the repository"),
        )
    };
    let workdir = ws.repo.workdir.as_ref().map(|w| w.canonicalize().unwrap_or_else(|_| w.clone()));
    let rel = match (&workdir, std::path::Path::new(path).canonicalize()) {
        (Some(w), Ok(abs)) if abs.starts_with(w) => abs.strip_prefix(w).unwrap().to_string_lossy().replace('\\', "/"),
        (Some(_), Ok(_)) => {
            out.push(outside("it resolves to a place outside the work tree"));
            return Ok(out);
        }
        _ if std::path::Path::new(path).is_absolute() || path.split('/').any(|c| c == "..") => {
            out.push(outside("an absolute path or one that climbs out with `..`"));
            return Ok(out);
        }
        _ => path.trim_start_matches("./").to_string(),
    };
    let name = format!("file {rel}");
    let f = ws.repo.explain_path(&rel)?;
    if !f.exists && !f.tracked {
        out.push(check(
            &name,
            "warn",
            "does not exist in the working tree or the index",
            Some("check the path (relative to the repository root)"),
        ));
        return Ok(out);
    }
    if f.submodule {
        out.push(check(&name, "ok", "not indexed: a submodule (gitlink); index it in its own repository", None));
        return Ok(out);
    }
    if f.symlink {
        out.push(check(&name, "ok", "not indexed: a symbolic link (its target is indexed where it lives)", None));
        return Ok(out);
    }
    if !f.tracked && f.ignored {
        out.push(check(
            &name,
            "ok",
            format!("not indexed: ignored by {}", f.ignore_rule.clone().unwrap_or_default()),
            Some("add a negation (`!path`) to .gitignore, or commit the file"),
        ));
        return Ok(out);
    }
    if let Some((attr, at)) = f.attributes.first() {
        out.push(check(
            &name,
            "ok",
            format!("not indexed: marked {attr} by {at}"),
            Some("remove or override the attribute in .gitattributes"),
        ));
        return Ok(out);
    }
    if let Ok(Some(g)) = crate::repo::exclude_set(&ws.config.index.exclude).map(|g| g.filter(|g| g.is_match(&rel))) {
        let _ = g;
        out.push(check(
            &name,
            "ok",
            "not indexed: matches index.exclude in the Lynx configuration",
            Some("edit index.exclude in lynx.toml or .lynx/config.toml"),
        ));
        return Ok(out);
    }
    let max = ws.config.index.max_file_size;
    if f.size.is_some_and(|s| s > max) {
        out.push(check(
            &name,
            "ok",
            format!("not indexed: {} bytes is over the size cap of {max}", f.size.unwrap()),
            Some("raise index.max_file_size"),
        ));
        return Ok(out);
    }
    let content = ws.repo.workdir.as_ref().and_then(|w| std::fs::read(w.join(&rel)).ok()).unwrap_or_default();
    if let Some(reason) = crate::repo::content_skip(&content) {
        out.push(check(&name, "ok", format!("not indexed: {}", reason.explain()), None));
        return Ok(out);
    }
    let lang = lang::detect(&rel, &content);
    let deep = lang
        .has_grammar()
        .then(|| crate::chunk::grammar::too_deep(lang, &crate::encoding::decode(&content).0))
        .flatten();
    let how = match deep {
        Some(d) => format!(
            "line windows without definitions or graph facts: its syntax nests {d} levels deep, over the {} the structure walks take",
            crate::chunk::grammar::MAX_DEPTH
        ),
        None if lang.has_grammar() => "tree-sitter chunks and graph facts".to_string(),
        None => "line windows (no grammar)".to_string(),
    };
    let blob = gix::objs::compute_hash(ws.repo.object_hash(), gix::objs::Kind::Blob, &content)?;
    let key = crate::store::Key::blob(blob.as_bytes(), crate::repo::lang_hint(&rel));
    let indexed = ws.store.catalogs(layer::CHUNKS, &layer::chunks_fingerprint())?.contains(&key);
    out.push(check(
        &name,
        "ok",
        format!(
            "included ({}{}, {how}{}); {}",
            lang.name(),
            crate::encoding::detect(&content).map(|e| format!(", decoded from {}", e.name())).unwrap_or_default(),
            if f.tracked { "" } else { ", untracked" },
            if indexed { "indexed" } else { "not indexed yet — run `git lynx index`" }
        ),
        None,
    ));
    Ok(out)
}

fn runtime_checks(engine: &Engine) -> Vec<Check> {
    let mut out = Vec::new();
    let setting = engine.ws.config.model.ort_dylib.as_deref();
    match crate::embed::onnx::find_library(setting) {
        _ if !crate::embed::onnx::BUILT => out.push(check(
            "ONNX Runtime",
            "ok",
            "not in this build (cargo feature `transformers`): static models only; transformer models and the cross-encoder are unavailable",
            None,
        )),
        Some(p) => out.push(check("ONNX Runtime", "ok", format!("found {}", p.display()), None)),
        None => out.push(check(
            "ONNX Runtime",
            "warn",
            "not found: transformer models and the cross-encoder cannot run (static models do not need it); looked in ORT_DYLIB_PATH, model.ort_dylib, the site-packages of VIRTUAL_ENV, CONDA_PREFIX and the python3 on PATH, ~/.local, pyenv, and the system library paths",
            Some("pip install onnxruntime (in the Python on PATH), or set ORT_DYLIB_PATH to libonnxruntime.so"),
        )),
    }
    match engine.embedder() {
        Ok(m) => match engine.builtin_because() {
            // Dense retrieval works, with a smaller model than the one chosen.
            Some(why) => out.push(check(
                "embedding model",
                "ok",
                format!("built-in model {} ({} dimensions) stands in: {why}", m.name(), m.dim()),
                Some("git lynx model pull (or model import on an offline machine) to use the chosen model"),
            )),
            None => out.push(check(
                "embedding model",
                "ok",
                format!("{} ({}, {} dimensions, fingerprint {})", m.name(), m.kind(), m.dim(), m.fingerprint()),
                None,
            )),
        },
        Err(reason) if reason.is_off() => out.push(check("embedding model", "ok", reason.to_string(), None)),
        Err(reason) => out.push(check(
            "embedding model",
            "warn",
            format!("{reason}; search answers lexically"),
            Some("git lynx model pull (or model import on an offline machine), or --no-dense"),
        )),
    }
    out
}

fn store_checks(engine: &Engine, repair: bool) -> Result<Vec<Check>> {
    let store = &engine.ws.store;
    let objects = store.objects().to_path_buf();
    let mut out = Vec::new();
    let names = list_segments(&objects)?;
    let mut damaged = Vec::new();
    for name in &names {
        let path = objects.join(format!("{name}.parquet"));
        let ok = match std::fs::read(&path) {
            Ok(bytes) => pack::verify_name(name, &bytes) && pack::scan_bytes(bytes.into()).is_ok(),
            Err(_) => false,
        };
        if !ok {
            damaged.push(name.clone());
        }
    }
    // Catalog entries against segments on disk.
    let on_disk: HashSet<&String> = names.iter().collect();
    let mut dangling = 0usize;
    let mut catalog_error = None;
    let mut referenced: HashSet<String> = HashSet::new();
    if let Ok(rd) = std::fs::read_dir(objects.join("catalog")) {
        for e in rd.flatten() {
            if e.path().extension().is_none_or(|x| x != "cat") {
                continue;
            }
            match crate::store::catalog::Catalog::load(&e.path()) {
                Ok(cat) => {
                    for s in &cat.segments {
                        referenced.insert(s.clone());
                        if !on_disk.contains(s) {
                            dangling += 1;
                        }
                    }
                }
                Err(err) => catalog_error = Some(format!("{err:#}")),
            }
        }
    }
    // Catalogs written once must still be there (a lost one would read as "nothing indexed").
    if let Ok(known) = std::fs::read_to_string(objects.join("catalog").join(crate::store::KNOWN)) {
        let lost: Vec<&str> = known
            .lines()
            .filter(|l| !l.is_empty() && !objects.join("catalog").join(format!("{l}.cat")).exists())
            .collect();
        if !lost.is_empty() && catalog_error.is_none() {
            catalog_error = Some(format!("catalog(s) missing: {}", lost.join(", ")));
        }
    } else if !names.is_empty() && referenced.is_empty() {
        catalog_error = Some("the catalogs are missing".into());
    }
    let unreferenced = names.iter().filter(|n| !referenced.contains(*n)).count();
    let problems = !damaged.is_empty() || dangling > 0 || catalog_error.is_some();
    if repair && (problems || unreferenced > 0) {
        let quarantine = store.root.join("quarantine");
        for name in &damaged {
            std::fs::create_dir_all(&quarantine)?;
            let from = objects.join(format!("{name}.parquet"));
            let _ = std::fs::rename(&from, quarantine.join(name.replace('/', "")));
        }
        let _lock = StoreLock::acquire(&store.root, "doctor --repair")?;
        let (kept, bad) = pack::rebuild_catalogs(&objects)?;
        let _ = std::fs::remove_dir_all(crate::shard::shards_dir(&store.root));
        out.push(check(
            "store repair",
            "ok",
            format!(
                "quarantined {} damaged segment(s) in {}; rebuilt catalogs from {kept} segments{}; cleared the shards (they rebuild on demand)",
                damaged.len(),
                quarantine.display(),
                if bad.is_empty() { String::new() } else { format!(" ({} unreadable left out)", bad.len()) }
            ),
            Some("run `git lynx index` to re-process what the quarantined segments held"),
        ));
        return Ok(out);
    }
    if damaged.is_empty() {
        out.push(check("segments", "ok", format!("{} segments, every one matches its hash", names.len()), None));
    } else {
        out.push(check(
            "segments",
            "error",
            format!(
                "{} damaged segment(s): {}",
                damaged.len(),
                damaged.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
            Some("git lynx doctor --repair (quarantines them; other data is kept)"),
        ));
    }
    match (catalog_error, dangling) {
        (Some(e), _) => {
            out.push(check("catalogs", "error", e, Some("git lynx doctor --repair rebuilds them from the segments")))
        }
        (None, 0) => out.push(check(
            "catalogs",
            "ok",
            format!("consistent with the segments ({unreferenced} segment(s) not yet catalogued)"),
            None,
        )),
        (None, n) => out.push(check(
            "catalogs",
            "error",
            format!("{n} catalog reference(s) to missing segments"),
            Some("git lynx doctor --repair"),
        )),
    }
    let (checked, invalid) = crate::shard::check_all(store, repair);
    if invalid.is_empty() {
        out.push(check(
            "shards",
            "ok",
            format!("{checked} shard(s) under {} pass their checks", crate::shard::shards_dir(&store.root).display()),
            None,
        ));
    } else if repair {
        out.push(check(
            "shards",
            "ok",
            format!(
                "removed {} damaged shard(s) of {checked}; they are rebuilt from their segments on use",
                invalid.len()
            ),
            None,
        ));
    } else {
        out.push(check(
            "shards",
            "warn",
            format!(
                "{} of {checked} shard(s) are damaged: {}",
                invalid.len(),
                invalid.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ),
            Some("git lynx doctor --repair removes them (a search rebuilds any shard it finds damaged by itself)"),
        ));
    }
    for alt in &store.dirs[1..] {
        let status = if alt.is_dir() { "ok" } else { "warn" };
        out.push(check("alternate", status, alt.display().to_string(), None));
    }
    Ok(out)
}

/// Every object of the working tree's blobs, derived again from the blob and compared.
fn verify_check(engine: &Engine, repair: bool) -> Result<Check> {
    let view = engine.view(&engine.spec(None))?;
    let wanted: Vec<(crate::store::Key, crate::index::adopt::Content)> = view
        .files
        .iter()
        .map(|f| {
            (
                f.key,
                match &f.content {
                    Some(c) => crate::index::adopt::Content::Bytes(c.as_slice()),
                    None => crate::index::adopt::Content::Odb(f.blob),
                },
            )
        })
        .collect();
    let model = engine.embedder().ok();
    let (checked, bad) = crate::index::adopt::verify_local(&engine.ws, &wanted, model.as_deref())?;
    if repair && !bad.is_empty() {
        let store = &engine.ws.store;
        // Every segment of a bad blob goes, whatever layer: what is processed again must not
        // meet rows of the old ones (chunks and lexical rows have to agree).
        let mut names: Vec<String> =
            bad.iter().flat_map(|r| std::iter::once(r.segment.clone()).chain(r.derived.iter().cloned())).collect();
        names.sort();
        names.dedup();
        let local: Vec<String> = names.into_iter().filter(|n| store.segment_path(0, n).exists()).collect();
        store.quarantine(&local)?;
        {
            let _lock = StoreLock::acquire(&store.root, "doctor --repair --verify")?;
            pack::rebuild_catalogs(store.objects())?;
        }
        engine.forget_views();
        return Ok(check(
            "verify",
            "ok",
            format!(
                "quarantined {} segment(s) holding objects that did not match their blobs; `git lynx index` processes those blobs again",
                local.len()
            ),
            None,
        ));
    }
    Ok(if bad.is_empty() {
        check("verify", "ok", format!("the objects of {checked} blobs match what processing them again gives"), None)
    } else {
        check(
            "verify",
            "error",
            format!(
                "{} of {checked} blobs have objects that do not match them: {}",
                bad.len(),
                bad.iter().take(3).map(|r| format!("{} ({})", r.segment, r.reason)).collect::<Vec<_>>().join("; ")
            ),
            Some(
                "the store was changed outside Lynx: `git lynx doctor --verify --repair` quarantines those segments, then `git lynx index`",
            ),
        )
    })
}

/// Whether the store can be written (a read-only store answers, but cannot index or repair).
fn writable_check(root: &std::path::Path) -> Check {
    let probe = crate::fsutil::temp_path_for(&root.join("doctor-probe"));
    match std::fs::write(&probe, b"probe") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            check("store writable", "ok", root.display().to_string(), None)
        }
        Err(e) => check(
            "store writable",
            "error",
            format!("cannot write in {}: {e}", root.display()),
            Some(
                "make the store writable (permissions, a read-only mount), or move it: the store is the repository's `.lynx`",
            ),
        ),
    }
}

fn disk_check(root: &std::path::Path) -> Check {
    match fs4::available_space(root) {
        Ok(b) if b < 512 * 1024 * 1024 => check(
            "disk space",
            "warn",
            format!("only {} free at {}", indicatif::HumanBytes(b), root.display()),
            Some("free space; `git lynx gc` removes unneeded segments"),
        ),
        Ok(b) => check("disk space", "ok", format!("{} free", indicatif::HumanBytes(b)), None),
        Err(e) => check("disk space", "ok", format!("unknown ({e})"), None),
    }
}
