//! `model pull | list | import | export`: getting embedding models onto a machine, including
//! air-gapped ones (export on a connected machine, import on the other).

use super::Answer;
use crate::embed::resolve::{self, ModelKind};
use anyhow::{Context, Result};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};

const MANIFEST: &str = "lynx-model.json";

crate::error::errors! {
    /// A model command asked for something it cannot do with the model it was given.
    pub enum ModelArgError: Usage {
        NoName {} => "cannot tell the model's name: pass --name OWNER/NAME",
        BadName { name: String } => "model name `{name}` must look like OWNER/NAME",
        NotTransformer { from: String, kind: String } =>
            "{from} is a {kind} model; distilling needs a transformer with an ONNX export (e.g. sentence-transformers/all-MiniLM-L6-v2)",
    }
}

#[derive(Debug, Serialize)]
pub struct ModelInfo {
    pub name: String,
    pub kind: ModelKind,
    pub path: String,
    pub bytes: u64,
    pub configured: bool,
}

pub fn pull(name: &str, progress: bool) -> Result<Answer> {
    let files = resolve::resolve(name, true, progress)?;
    let (bytes, _) = crate::fsutil::dir_size(&files.dir);
    let info = ModelInfo {
        name: name.to_string(),
        kind: files.kind,
        path: files.dir.display().to_string(),
        bytes,
        configured: false,
    };
    let text = format!("{} ({:?}) ready at {}\n", info.name, info.kind, info.path).to_lowercase();
    Ok(Answer::new("model_pull", None, &info, text))
}

/// Models in the HuggingFace cache that Lynx can use.
pub fn list(configured: &str) -> Result<Answer> {
    let cache = resolve::hf_cache_dir();
    let mut models = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&cache) {
        for e in rd.flatten() {
            let dir_name = e.file_name().to_string_lossy().into_owned();
            let Some(id) = dir_name.strip_prefix("models--") else { continue };
            let name = id.replacen("--", "/", 1);
            let Some(snap) = resolve::cached_snapshot(&name) else { continue };
            if let Ok(f) = resolve::inspect_dir(&name, &snap, None) {
                let (bytes, _) = dir_size_following(&snap);
                models.push(ModelInfo {
                    configured: name == configured,
                    name,
                    kind: f.kind,
                    path: snap.display().to_string(),
                    bytes,
                });
            }
        }
    }
    models.sort_by(|a, b| a.name.cmp(&b.name));
    let mut text = format!("models in {}:\n", cache.display());
    if models.is_empty() {
        // A local path is already usable as it is; only a hub id is pulled.
        if crate::config::is_model_id(configured) {
            text.push_str(&format!(
                "  (none) — run `git lynx model pull {configured}` (or `git lynx model import ARCHIVE` offline)\n"
            ));
        } else {
            text.push_str(&format!("  (none) — the configured model is the local path {configured}, used from there; `git lynx model pull OWNER/NAME` fetches a hub model\n"));
        }
    }
    for m in &models {
        text.push_str(&format!(
            "  {}{} [{}] {}\n",
            m.name,
            if m.configured { " (configured)" } else { "" },
            format!("{:?}", m.kind).to_lowercase(),
            indicatif::HumanBytes(m.bytes)
        ));
    }
    Ok(Answer::new("model_list", None, ModelList { cache: cache.display().to_string(), models }, text))
}

/// Snapshot files are symlinks into blobs/: count what they point at.
fn dir_size_following(dir: &Path) -> (u64, u64) {
    let mut bytes = 0;
    let mut files = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            match std::fs::metadata(&p) {
                Ok(m) if m.is_dir() => stack.push(p),
                Ok(m) => {
                    bytes += m.len();
                    files += 1;
                }
                Err(_) => {}
            }
        }
    }
    (bytes, files)
}

/// Files of a model folder worth carrying (relative paths).
fn model_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(dir.join(&rel))?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let r = rel.join(&name);
            let md = std::fs::metadata(e.path())?;
            if md.is_dir() {
                stack.push(r);
            } else {
                out.push(r);
            }
        }
    }
    out.sort();
    Ok(out)
}

pub fn export(name: &str, file: &Path) -> Result<Answer> {
    let m = resolve::resolve(name, false, false)?;
    let files = model_files(&m.dir)?;
    let out = std::fs::File::create(file).with_context(|| format!("creating {}", file.display()))?;
    let lower = file.to_string_lossy().to_ascii_lowercase();
    let writer: Box<dyn std::io::Write> = if lower.ends_with(".zst") || lower.ends_with(".tzst") {
        Box::new(zstd::Encoder::new(out, 3)?.auto_finish())
    } else if lower.ends_with(".gz") || lower.ends_with(".tgz") {
        Box::new(flate2::write::GzEncoder::new(out, flate2::Compression::default()))
    } else {
        Box::new(out)
    };
    let mut tar = tar::Builder::new(writer);
    tar.follow_symlinks(true);
    let manifest = serde_json::to_vec_pretty(&Manifest { name: &m.name, kind: m.kind, files: &files })?;
    let mut header = tar::Header::new_gnu();
    header.set_size(manifest.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, MANIFEST, manifest.as_slice())?;
    for f in &files {
        tar.append_path_with_name(m.dir.join(f), f)?;
    }
    tar.into_inner()?.flush()?;
    let text = format!("exported {} ({} files) to {}\n", m.name, files.len(), file.display());
    Ok(Answer::new(
        "model_export",
        None,
        ModelExported { name: m.name.clone(), file: file.display().to_string(), files: files.len() },
        text,
    ))
}

/// Imports a model folder or archive into the HuggingFace cache under `name` (or the name in
/// the archive's manifest), so it resolves by name with no network.
pub fn import(path: &Path, name: Option<&str>) -> Result<Answer> {
    let staging = tempfile_dir()?;
    let src: PathBuf = if path.is_dir() {
        path.to_path_buf()
    } else {
        let f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let lower = path.to_string_lossy().to_ascii_lowercase();
        let reader: Box<dyn Read> = if lower.ends_with(".zst") || lower.ends_with(".tzst") {
            Box::new(zstd::Decoder::new(f)?)
        } else if lower.ends_with(".gz") || lower.ends_with(".tgz") {
            Box::new(flate2::read::GzDecoder::new(f))
        } else {
            Box::new(f)
        };
        tar::Archive::new(reader)
            .unpack(&staging)
            .with_context(|| format!("{} is not a readable model archive (tar, tar.gz or tar.zst)", path.display()))?;
        staging.clone()
    };
    let manifest: serde_json::Value = std::fs::read_to_string(src.join(MANIFEST))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let name = match (name, manifest["name"].as_str()) {
        (Some(n), _) => n.to_string(),
        (None, Some(n)) if n.contains('/') && !Path::new(n).exists() => n.to_string(),
        _ => return Err(ModelArgError::NoName {}.into()),
    };
    if name.split('/').count() != 2 {
        return Err(ModelArgError::BadName { name }.into());
    }
    let files = model_files(&src)?.into_iter().filter(|f| f != Path::new(MANIFEST)).collect::<Vec<_>>();
    let probe = resolve::inspect_dir(&name, &src, None).context("the imported folder is not a usable model")?;
    // A content-derived snapshot id keeps re-imports idempotent.
    let mut h = blake3::Hasher::new();
    for f in &files {
        h.update(f.to_string_lossy().as_bytes());
        h.update_reader(std::fs::File::open(src.join(f))?)?;
    }
    let snapshot = h.finalize().to_hex()[..40].to_string();
    let base = resolve::hf_cache_dir().join(format!("models--{}", name.replace('/', "--")));
    let dest = base.join("snapshots").join(&snapshot);
    for f in &files {
        let to = dest.join(f);
        std::fs::create_dir_all(to.parent().unwrap())?;
        std::fs::copy(src.join(f), &to).with_context(|| format!("copying {}", f.display()))?;
    }
    crate::fsutil::write_atomic(&base.join("refs").join("main"), snapshot.as_bytes())?;
    let _ = std::fs::remove_dir_all(&staging);
    let text = format!("imported {name} ({} files, {:?}) into {}\n", files.len(), probe.kind, dest.display());
    Ok(Answer::new(
        "model_import",
        None,
        ModelImported { name: name.to_string(), path: dest.display().to_string(), files: files.len() },
        text,
    ))
}

fn tempfile_dir() -> Result<PathBuf> {
    let d =
        std::env::temp_dir().join(format!("lynx-model-import-{}-{}", std::process::id(), crate::fsutil::now_secs()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

/// What `model distill` is asked for.
pub struct DistillArgs<'a> {
    /// The transformer: a repo id, a folder or an `.onnx` file.
    pub from: &'a str,
    pub out: &'a Path,
    pub shape: crate::embed::distill::DistillOptions,
    /// Extra words, one per line (`#` comments).
    pub words_file: Option<&'a Path>,
    /// The N most frequent identifier words of the repository's HEAD (needs `ws`).
    pub repo_words: usize,
    pub threads: usize,
    pub ort_setting: Option<&'a str>,
}

/// Distils a static model from a local transformer (`embed::distill`), optionally with a
/// vocabulary extended by words of this repository's identifiers.
pub fn distill(args: &DistillArgs, ws: Option<&crate::workspace::Workspace>, progress: bool) -> Result<Answer> {
    let files = resolve::resolve(args.from, false, false)?;
    if files.kind != ModelKind::Transformer {
        return Err(
            ModelArgError::NotTransformer { from: args.from.to_string(), kind: format!("{:?}", files.kind) }.into()
        );
    }
    let onnx = files.onnx.clone().context("the transformer has no ONNX file")?;
    let t = crate::embed::transformer::Transformer::load(
        &files.name,
        &files.dir,
        &onnx,
        args.threads,
        args.ort_setting,
        String::new(),
    )?;
    let mut words: Vec<String> = Vec::new();
    if let Some(f) = args.words_file {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading the word list {}", f.display()))?;
        words.extend(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string));
    }
    if args.repo_words > 0 {
        let ws = ws.context("--repo-words needs a git repository (run it inside one)")?;
        let view = crate::view::View::open(ws, &crate::view::ViewSpec::Rev("HEAD".into()))?;
        let local = ws.repo.local();
        let blobs: Vec<Vec<u8>> = view
            .files
            .iter()
            .filter(|f| {
                crate::lang::by_path(&f.path).is_some_and(|l| l.is_code())
                    && !crate::graph::model::is_test_path(&f.path)
            })
            .filter_map(|f| crate::repo::Repo::read_blob(&local, f.blob).ok())
            .collect();
        words.extend(crate::embed::distill::identifier_words(blobs.iter().map(Vec::as_slice), args.repo_words, 3));
    }
    let bar = crate::progress::Progress::new(progress);
    let last = std::sync::atomic::AtomicUsize::new(0);
    let report =
        crate::embed::distill::distill(&t, &files.dir, &files.name, args.out, &args.shape, &words, &|done, total| {
            if last.load(std::sync::atomic::Ordering::Relaxed) == 0 {
                bar.start("distilling tokens", total as u64);
            }
            let before = last.swap(done, std::sync::atomic::Ordering::Relaxed);
            bar.inc(done.saturating_sub(before) as u64);
        })?;
    bar.finish();
    let text = format!(
        "distilled {} into {}: {} tokens ({} repository/extra words added, {} already known), {} dimensions, {:.0} s\nuse it with: git lynx index --model {}\n",
        report.source,
        report.out,
        report.tokens,
        report.words_added,
        report.words_skipped,
        report.dim,
        report.seconds,
        report.out
    );
    Ok(Answer::new("model_distill", None, &report, text))
}

/// The model a `model` command means when none is named: the one this repository's commands
/// would use (`--model`, `LYNX_MODEL`, configuration, the store's recorded model), by the
/// engine's own rule; the default outside a repository.
pub fn configured_name(flag: Option<&str>, ws: Option<&crate::workspace::Workspace>) -> String {
    let default_config = crate::config::Config::default();
    let config = ws.map_or(&default_config, |w| &w.config);
    let recorded = ws.and_then(|w| crate::engine::ModelChoice::recorded(&w.store.root));
    crate::engine::ModelChoice::from(flag, false, config, true, recorded)
        .name
        .unwrap_or_else(|| crate::config::DEFAULT_MODEL.to_string())
}

/// The models in the HuggingFace cache.
#[derive(Debug, Serialize)]
pub struct ModelList {
    pub cache: String,
    pub models: Vec<ModelInfo>,
}

/// A model written to an archive.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModelExported {
    pub name: String,
    pub file: String,
    pub files: usize,
}

/// A model imported into the cache, and where it went.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModelImported {
    pub name: String,
    pub path: String,
    pub files: usize,
}

/// The manifest an exported archive carries: the model's name, kind and files.
#[derive(Serialize)]
struct Manifest<'a> {
    name: &'a str,
    kind: ModelKind,
    files: &'a [PathBuf],
}

results!(ModelInfo, ModelList => "models", ModelExported, ModelImported);

results!(crate::embed::distill::DistillReport);
