//! Sharing objects: the catalog rebuilt from segments, `objects export` (a directory that can
//! serve as an alternate, or a single `.lynxpack` file) and `objects import` (hash-verified,
//! refusing corrupt packs and packs from another pipeline).

use super::catalog::{Catalog, catalog_path};
use super::{Key, META_FINGERPRINT, META_LAYER, Store};
use crate::fsutil;
use anyhow::{Context, Result};
use arrow::array::{Array, FixedSizeBinaryArray};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A segment's layer, fingerprint and (key, first row, rows), read from the file itself.
pub struct Scanned {
    pub layer: String,
    pub fingerprint: String,
    pub keys: Vec<(Key, u32, u32)>,
}

/// Reads a segment's metadata and key column (a damaged file is an error).
pub fn scan_bytes(bytes: bytes::Bytes) -> Result<Scanned> {
    super::guarded(Path::new("(in memory)"), || scan_unguarded(bytes))
}

crate::error::errors! {
    /// Why a pack or an object directory offered for import is refused whole.
    pub enum PackError: Failure {
        NotSegment {} => "not a Lynx segment (no layer metadata)",
        TooManyEntries { pack: String, limit: usize } => "{pack} holds more than {limit} entries; refusing it",
        EntryTooLarge { pack: String, path: String, size: u64, limit: u64 } =>
            "refusing {pack}: its entry {path} is {size} bytes, over the limit of {limit}",
        TooLarge { pack: String, what: &'static str, limit: u64 } => "refusing {pack}: {what} more than {limit} bytes",
        EntryLonger { pack: String, path: String } => "refusing {pack}: its entry {path} holds more than it says",
        HashMismatch { pack: String, name: String } =>
            "refusing {pack}: segment {name} does not match its hash (the pack is corrupt or was tampered with); nothing was imported",
        Unreadable { pack: String, name: String, why: String } =>
            "refusing {pack}: segment {name} is unreadable ({why}); nothing was imported",
        OtherPipeline { pack: String, name: String, layer: String, fingerprint: String } =>
            "refusing {pack}: segment {name} was made by another pipeline ({layer} layer, fingerprint {fingerprint}); this build of git-lynx would never use it. Export it again with this version",
        NoManifest { pack: String } => "{pack} is not a Lynx pack (no manifest.json)",
        Empty { pack: String } => "{pack} holds no Lynx segments",
    }
}

fn scan_unguarded(bytes: bytes::Bytes) -> Result<Scanned> {
    super::budget::check(&bytes)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).context("not a readable Parquet file")?;
    let meta = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
    let get = |k: &str| meta.iter().find(|kv| kv.key == k).and_then(|kv| kv.value.clone()).unwrap_or_default();
    let (layer, fingerprint) = (get(META_LAYER), get(META_FINGERPRINT));
    if layer.is_empty() || fingerprint.is_empty() {
        return Err(PackError::NotSegment {}.into());
    }
    let mask = ProjectionMask::columns(builder.parquet_schema(), ["key"]);
    let reader = builder.with_projection(mask).with_batch_size(64 * 1024).build()?;
    let mut keys: Vec<(Key, u32, u32)> = Vec::new();
    let mut row = 0u32;
    for b in reader {
        let b = b.context("damaged segment data")?;
        let col: &FixedSizeBinaryArray =
            b.column(0).as_any().downcast_ref().context("segment key column has the wrong type")?;
        for i in 0..col.len() {
            let k = Key(col.value(i).try_into().context("segment key has the wrong width")?);
            match keys.last_mut() {
                Some((last, _, n)) if *last == k => *n += 1,
                _ => keys.push((k, row, 1)),
            }
            row += 1;
        }
    }
    Ok(Scanned { layer, fingerprint, keys })
}

pub fn scan_file(path: &Path) -> Result<Scanned> {
    let bytes = fsutil::read_bounded(path, super::budget::MAX_SEGMENT_BYTES)?;
    scan_bytes(bytes.into()).with_context(|| format!("segment {}", path.display()))
}

/// Verifies that a segment's bytes hash to its name.
pub fn verify_name(name: &str, bytes: &[u8]) -> bool {
    let hex = blake3::hash(bytes).to_hex();
    name == format!("{}/{}", &hex[..2], &hex[2..])
}

/// Rebuilds every catalog of an object directory from its segments. Returns (segments,
/// unreadable segment names).
pub fn rebuild_catalogs(objects: &Path) -> Result<(usize, Vec<String>)> {
    let mut cats: BTreeMap<(String, String), Catalog> = BTreeMap::new();
    let mut bad = Vec::new();
    let names = super::list_segments(objects)?;
    for name in &names {
        let path = objects.join(format!("{name}.parquet"));
        // Damaged bytes never reach the Parquet decoder.
        if !fsutil::read_bounded(&path, super::budget::MAX_SEGMENT_BYTES).is_ok_and(|b| verify_name(name, &b)) {
            tracing::warn!("segment {name} is damaged (its bytes no longer match its name); left out of the catalogs");
            bad.push(name.clone());
            continue;
        }
        match scan_file(&path) {
            Ok(s) => cats.entry((s.layer, s.fingerprint)).or_default().add(name, &s.keys),
            Err(e) => {
                tracing::warn!("{e:#}");
                bad.push(name.clone());
            }
        }
    }
    let dir = objects.join("catalog");
    std::fs::create_dir_all(&dir)?;
    // Old catalogs go; the rebuilt ones replace them.
    for e in std::fs::read_dir(&dir)?.flatten() {
        if e.path().extension().is_some_and(|x| x == "cat") {
            let _ = std::fs::remove_file(e.path());
        }
    }
    for ((layer, fp), cat) in &cats {
        cat.save(&catalog_path(objects, layer, fp))?;
    }
    super::note_known(objects, &cats.keys().map(|(l, f)| format!("{l}-{f}")).collect::<Vec<_>>())?;
    Ok((names.len() - bad.len(), bad))
}

pub const PACK_EXT: &str = "lynxpack";

/// Writes `segments` (names in the local store or its alternates) to `to`: a directory laid
/// out like an object directory (with catalogs, usable as an alternate), or a `.lynxpack`
/// file (tar of the same layout plus a manifest).
/// Writes `segments` (and `extra` files, by relative path under `docs/`) to a directory or pack.
pub fn export(
    store: &Store,
    segments: &BTreeSet<(usize, String)>,
    extra: &[(String, Vec<u8>)],
    to: &Path,
) -> Result<(usize, u64)> {
    let is_pack = to.extension().is_some_and(|e| e == PACK_EXT);
    let mut bytes_total = 0u64;
    if is_pack {
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p)?;
        }
        let tmp = fsutil::temp_path_for(to);
        let file = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut tar = tar::Builder::new(file);
        let mut manifest = Vec::new();
        for (dir, name) in segments {
            let bytes = std::fs::read(store.segment_path(*dir, name))?;
            bytes_total += bytes.len() as u64;
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o444);
            h.set_cksum();
            tar.append_data(&mut h, format!("objects/{name}.parquet"), bytes.as_slice())?;
            manifest.push(serde_json::json!({"name": name, "bytes": bytes.len()}));
        }
        for (rel, bytes) in extra {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o444);
            h.set_cksum();
            tar.append_data(&mut h, format!("docs/{rel}"), bytes.as_slice())?;
        }
        let m = serde_json::to_vec_pretty(
            &serde_json::json!({"format": "lynxpack-1", "created_by": format!("git-lynx {}", env!("CARGO_PKG_VERSION")), "segments": manifest}),
        )?;
        let mut h = tar::Header::new_gnu();
        h.set_size(m.len() as u64);
        h.set_mode(0o444);
        h.set_cksum();
        tar.append_data(&mut h, "manifest.json", m.as_slice())?;
        let f = tar.into_inner()?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, to)?;
    } else {
        for (dir, name) in segments {
            let bytes = std::fs::read(store.segment_path(*dir, name))?;
            bytes_total += bytes.len() as u64;
            let dest = to.join(format!("{name}.parquet"));
            if !dest.exists() {
                fsutil::write_atomic(&dest, &bytes)?;
            }
        }
        for (rel, bytes) in extra {
            fsutil::write_atomic(&to.join("docs").join(rel), bytes)?;
        }
        // Vector layer descriptions travel with their segments.
        for d in &store.dirs {
            if let Ok(rd) = std::fs::read_dir(d.join("catalog")) {
                for e in rd.flatten() {
                    if e.path().extension().is_some_and(|x| x == "json") {
                        let dest = to.join("catalog").join(e.file_name());
                        if !dest.exists() {
                            std::fs::create_dir_all(dest.parent().unwrap())?;
                            std::fs::copy(e.path(), dest)?;
                        }
                    }
                }
            }
        }
        rebuild_catalogs(to)?;
    }
    Ok((segments.len(), bytes_total))
}

/// The largest documentation file (a compressed page text or a manifest) a pack may carry.
const MAX_EXTRA_BYTES: u64 = 32 << 20;
/// Entries and bytes a pack may hold in all.
const MAX_PACK_ENTRIES: usize = 1_000_000;
const MAX_PACK_BYTES: u64 = 64 << 30;

/// `docs/…` paths that are plain relative paths.
fn plain(rel: &str) -> bool {
    !rel.is_empty() && !rel.starts_with('/') && rel.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// A segment name (`ab/<62 hex>`) from a pack entry or directory path, when it is one.
fn segment_name(path: &str) -> Option<String> {
    let rest = path.strip_suffix(".parquet")?;
    let (dir, file) = rest.split_once('/')?;
    (dir.len() == 2 && file.len() == 62 && dir.bytes().chain(file.bytes()).all(|b| b.is_ascii_hexdigit()))
        .then(|| rest.to_ascii_lowercase())
}

/// What a pack entry is, decided from its name before its bytes are read.
enum EntryKind {
    Manifest,
    Segment(String),
    Extra(String),
    Other,
}

fn entry_kind(path: &str) -> EntryKind {
    if path == "manifest.json" {
        EntryKind::Manifest
    } else if let Some(name) = path.strip_prefix("objects/").and_then(segment_name) {
        EntryKind::Segment(name)
    } else if let Some(rel) = path.strip_prefix("docs/").filter(|r| plain(r)) {
        EntryKind::Extra(rel.to_string())
    } else {
        EntryKind::Other
    }
}

/// Calls `each(kind, bytes)` for every entry of a directory or pack that `wanted` accepts, one
/// at a time and bounded: names are judged before bytes are read, every entry's size before
/// it is read (a GNU-sparse entry counts at its expanded size), and the whole pack too.
fn for_each_entry(
    from: &Path,
    wanted: &dyn Fn(&EntryKind) -> bool,
    each: &mut dyn FnMut(EntryKind, Vec<u8>) -> Result<()>,
) -> Result<bool> {
    use std::io::Read;
    let limit = |k: &EntryKind| match k {
        EntryKind::Segment(_) => super::budget::MAX_SEGMENT_BYTES,
        _ => MAX_EXTRA_BYTES,
    };
    if from.is_dir() {
        for name in super::list_segments(from)? {
            let kind = EntryKind::Segment(name.clone());
            if wanted(&kind) {
                let bytes = fsutil::read_bounded(&from.join(format!("{name}.parquet")), limit(&kind))?;
                each(kind, bytes)?;
            }
        }
        let docs = from.join("docs");
        for e in
            walkdir::WalkDir::new(&docs).follow_links(false).into_iter().flatten().filter(|e| e.file_type().is_file())
        {
            let rel = e.path().strip_prefix(&docs).unwrap_or(e.path()).to_string_lossy().replace('\\', "/");
            let kind = EntryKind::Extra(rel.clone());
            if plain(&rel) && wanted(&kind) {
                let bytes = fsutil::read_bounded(e.path(), MAX_EXTRA_BYTES)?;
                each(kind, bytes)?;
            }
        }
        return Ok(true);
    }
    let not_pack = || {
        format!(
            "{} is neither an object directory nor a Lynx pack (.lynxpack, a tar file made by `git lynx objects export`)",
            from.display()
        )
    };
    let file = std::fs::File::open(from).with_context(|| format!("opening {}", from.display()))?;
    let mut ar = tar::Archive::new(file);
    let (mut saw_manifest, mut entries, mut total) = (false, 0usize, 0u64);
    for entry in ar.entries().with_context(not_pack)? {
        // Past the first entry it is a pack, damaged: say so, not that it is something else.
        let mut entry = entry.with_context(|| {
            if entries == 0 {
                not_pack()
            } else {
                format!("refusing {}: it is damaged (a tar header does not hold); nothing was imported", from.display())
            }
        })?;
        entries += 1;
        if entries > MAX_PACK_ENTRIES {
            return Err(PackError::TooManyEntries { pack: from.display().to_string(), limit: MAX_PACK_ENTRIES }.into());
        }
        let path = entry.path().with_context(not_pack)?.to_string_lossy().into_owned();
        let kind = entry_kind(&path);
        if matches!(kind, EntryKind::Other) || !wanted(&kind) {
            saw_manifest |= matches!(kind, EntryKind::Manifest);
            continue;
        }
        let size = entry.size().max(entry.header().size().unwrap_or(0));
        if size > limit(&kind) {
            return Err(
                PackError::EntryTooLarge { pack: from.display().to_string(), path, size, limit: limit(&kind) }.into()
            );
        }
        total += size;
        if total > MAX_PACK_BYTES {
            return Err(PackError::TooLarge {
                pack: from.display().to_string(),
                what: "it unpacks to",
                limit: MAX_PACK_BYTES,
            }
            .into());
        }
        let mut bytes = Vec::with_capacity(size as usize);
        (&mut entry)
            .take(size + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{} is damaged", from.display()))?;
        if bytes.len() as u64 > size {
            return Err(PackError::EntryLonger { pack: from.display().to_string(), path }.into());
        }
        saw_manifest |= matches!(kind, EntryKind::Manifest);
        each(kind, bytes)?;
    }
    if entries == 0 {
        return Err(anyhow::Error::msg(not_pack()));
    }
    Ok(saw_manifest)
}

/// The extra files of a directory or pack (`docs/…`), by relative path, as they are: the
/// caller checks them. Paths that are not plain relative paths are left out.
pub fn read_extra(from: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for_each_entry(from, &|k| matches!(k, EntryKind::Extra(_)), &mut |k, bytes| {
        total += bytes.len() as u64;
        if total > MAX_PACK_BYTES {
            return Err(PackError::TooLarge {
                pack: from.display().to_string(),
                what: "its documentation files hold",
                limit: MAX_PACK_BYTES,
            }
            .into());
        }
        if let EntryKind::Extra(rel) = k {
            out.push((rel, bytes));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The segments of a directory or pack, each checked against its name (the blake3 of its
/// bytes), within the decoding budget, and read for its layer and fingerprint, then written to
/// `staging` (an object directory) one at a time; refused whole when any is corrupt or was made
/// by a pipeline `accept` rejects.
pub fn read_checked(
    from: &Path,
    accept: &dyn Fn(&str, &str) -> bool,
    staging: &Path,
) -> Result<Vec<(String, Scanned)>> {
    let mut out = Vec::new();
    let saw_manifest =
        for_each_entry(from, &|k| matches!(k, EntryKind::Segment(_) | EntryKind::Manifest), &mut |k, bytes| {
            let EntryKind::Segment(name) = k else { return Ok(()) };
            if !verify_name(&name, &bytes) {
                return Err(PackError::HashMismatch { pack: from.display().to_string(), name }.into());
            }
            let s = scan_bytes(bytes.clone().into()).map_err(|e| PackError::Unreadable {
                pack: from.display().to_string(),
                name: name.clone(),
                why: format!("{e:#}"),
            })?;
            if !accept(&s.layer, &s.fingerprint) {
                return Err(PackError::OtherPipeline {
                    pack: from.display().to_string(),
                    name,
                    layer: s.layer,
                    fingerprint: s.fingerprint,
                }
                .into());
            }
            fsutil::write_atomic(&staging.join(format!("{name}.parquet")), &bytes)?;
            out.push((name, s));
            Ok(())
        })?;
    if !from.is_dir() && !saw_manifest {
        return Err(PackError::NoManifest { pack: from.display().to_string() }.into());
    }
    if out.is_empty() {
        return Err(PackError::Empty { pack: from.display().to_string() }.into());
    }
    Ok(out)
}

/// Installs checked, staged segments as they are (trusted imports). Returns how many were new.
pub fn install(store: &Store, staging: &Path, segments: Vec<(String, Scanned)>) -> Result<usize> {
    let mut added: BTreeMap<(String, String), Vec<(String, Vec<(Key, u32, u32)>)>> = BTreeMap::new();
    let mut new = 0;
    for (name, s) in segments {
        let path = store.segment_path(0, &name);
        if !path.exists() {
            let bytes =
                fsutil::read_bounded(&staging.join(format!("{name}.parquet")), super::budget::MAX_SEGMENT_BYTES)?;
            fsutil::write_atomic(&path, &bytes)?;
            new += 1;
        }
        added.entry((s.layer, s.fingerprint)).or_default().push((name, s.keys));
    }
    for ((layer, fp), segs) in added {
        store.commit(&layer, &fp, &segs)?;
    }
    Ok(new)
}

/// Writes the catalogs of staged segments in `dir`, making it an object directory (a pool from
/// which `index::adopt` checks and copies what it needs).
pub fn stage(dir: &Path, segments: &[(String, Scanned)]) -> Result<()> {
    let mut cats: BTreeMap<(String, String), Catalog> = BTreeMap::new();
    for (name, s) in segments {
        cats.entry((s.layer.clone(), s.fingerprint.clone())).or_default().add(name, &s.keys);
    }
    for ((layer, fp), cat) in &cats {
        cat.save(&catalog_path(dir, layer, fp))?;
    }
    Ok(())
}
