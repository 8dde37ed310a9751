//! A shared object store as a remote cache of segments (S3-compatible, HTTP read-only, or a
//! directory), the way build caches share their outputs. Layout under the URL's prefix:
//!
//! - `segments/<ab>/<62 hex>.parquet`: the segments, named by the blake3 of their bytes as in
//!   `.lynx/objects`, written put-if-absent and never changed;
//! - `catalog/<layer>-<fingerprint>/<1 hex>/<generation>-<hash>.json.zst`: catalog shards, 16
//!   groups per (layer, fingerprint) by the first hex digit of the key, each shard saying which
//!   segment holds each key's rows. A shard is immutable too (named by its content): a push
//!   writes one per group it adds keys to, holding those keys; once a group has
//!   `COMPACT_AFTER` shards a reader would read, the push's shard holds them all and names
//!   the shards it covers.
//!
//! - `manifests/<32 hex>.json.zst`: one per push, named by its content: the commits pushed and
//!   every segment their views need as the store names it. `objects gc` on the store keeps
//!   what the manifests it keeps reach (the store's own lifecycle rules are the alternative).
//!
//! A reader lists a layer once, reads each group it needs from the newest generation down and
//! skips the shards a read one covers; concurrent pushers both write shards, and a reader takes
//! the union. Sixteen groups keep a small repository's catalog a few dozen objects (a fresh
//! clone reads it in one round of requests) while a reader of a few blobs of a large one reads a
//! sixteenth of it. Shards
//! are written only after every segment they name exists, so a killed push leaves at most
//! segments no shard names yet, which nothing reads. Whatever comes from the store is checked
//! as an import is (name = hash, size cap, schema and bounds, expected layer) before use.

// The layout's helpers serve the client, which a build without `remote-store` leaves out.
#![cfg_attr(not(feature = "remote-store"), allow(dead_code))]

use super::Key;
use anyhow::Result;
#[cfg(feature = "remote-store")]
pub use client::*;

/// The URL schemes a store may have.
pub const SUPPORTED: &str = "s3://bucket/prefix, file:///absolute/dir or https://host/path (read-only)";

/// Where the store's URL came from, and the URL.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Configured {
    pub url: String,
    /// `flag`, `LYNX_OBJECTS_URL` or the file that set `store.objects_url`.
    pub from: String,
}

/// The store the user chose: a flag, else `LYNX_OBJECTS_URL`, else `store.objects_url` of the
/// user's own files (a committed `lynx.toml` cannot set it: `config::restrict_team_table`).
pub fn configured(flag: Option<&str>, config: &crate::config::Config) -> Option<Configured> {
    if let Some(u) = flag.filter(|u| !u.is_empty()) {
        return Some(Configured { url: u.to_string(), from: "flag".into() });
    }
    if let Some(u) = crate::env::get(crate::env::LYNX_OBJECTS_URL) {
        return Some(Configured { url: u, from: crate::env::LYNX_OBJECTS_URL.into() });
    }
    let url = config.store.objects_url.clone().filter(|u| !u.trim().is_empty())?;
    let from = config.origin.keys.get("store.objects_url").map_or("configuration", |l| l.name()).to_string();
    Some(Configured { url, from })
}

/// What reading from the store did for one indexing run (`index --json` reports it).
#[derive(Debug, Default, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Fetched {
    pub url: String,
    /// Keys asked for, and those the store's catalog shards named.
    pub asked: usize,
    pub hits: usize,
    pub misses: usize,
    /// Segments downloaded and installed, and their bytes.
    pub segments: usize,
    pub bytes: u64,
    /// Segments refused (forged, oversized, unreadable or of another layer), with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Set when the store could not be reached or read: indexing went on locally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub seconds: f64,
}

impl Fetched {
    /// Adds another round's counts (the vectors after the blobs' layers).
    pub fn add(&mut self, other: &Fetched) {
        self.asked += other.asked;
        self.hits += other.hits;
        self.misses += other.misses;
        self.segments += other.segments;
        self.bytes += other.bytes;
        self.refused.extend(other.refused.iter().cloned());
        if self.error.is_none() {
            self.error.clone_from(&other.error);
        }
        self.seconds += other.seconds;
    }
}

/// What a push did (`push --objects --json`).
#[derive(Debug, Default, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Pushed {
    pub url: String,
    /// Segments the revisions need, those uploaded and their bytes, and those the store held.
    pub segments: usize,
    pub uploaded: usize,
    pub bytes: u64,
    pub skipped: usize,
    /// Catalog shards written.
    pub shards: usize,
    /// The manifest this push wrote (`manifests/…`), naming every segment its revisions need.
    pub manifest: String,
    pub seconds: f64,
}

/// How `objects gc` on a store decides what stays.
#[derive(Debug, Clone)]
pub struct GcPolicy {
    /// Manifests younger than this are kept (the newest one always is).
    pub keep: std::time::Duration,
    /// Segments and shards younger than this stay even when no kept manifest reaches them: a
    /// push uploads its segments before it writes its manifest.
    pub grace: std::time::Duration,
    /// Only say what would be removed.
    pub dry_run: bool,
}

/// What `objects gc` on a store did, or would do (`--dry-run`).
#[derive(Debug, Default, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct StoreGc {
    pub url: String,
    pub dry_run: bool,
    pub manifests_kept: usize,
    pub manifests_removed: usize,
    pub segments_kept: usize,
    pub segments_removed: usize,
    pub bytes_removed: u64,
    /// Catalog groups written again without the removed segments, and shard files removed.
    pub shards_rewritten: usize,
    pub shards_removed: usize,
    pub seconds: f64,
}

crate::error::errors! {
    /// What goes wrong with a shared object store: its URL, or what it serves.
    pub enum RemoteError: Failure {
        Scheme { url: String, scheme: String, supported: &'static str } =>
            "object store URL `{url}`: the `{scheme}` scheme is not supported by this build; use {supported}",
        NoBucket { url: String } => "object store URL `{url}` names no bucket; use s3://bucket/prefix",
        RelativePath { url: String } => "object store URL `{url}` needs an absolute path: file:///absolute/dir",
        TooLarge { bytes: u64, limit: u64 } => "it is {bytes} bytes, over the limit of {limit}",
        Longer { limit: u64 } => "it holds more than the limit of {limit} bytes",
        Stopped { segments: usize, name: String, why: String } =>
            "it stopped answering: none of its {segments} segments could be downloaded ({name}: {why})",
        Forged {} => "its bytes do not hash to its name (forged or damaged)",
        OtherLayer { found: String, expected: String } => "it holds layer {found}, not the {expected} its catalog shard says",
        ReadOnly { url: String } =>
            "the object store {url} is read-only over HTTP(S); push to its s3:// or file:// URL instead",
        NoManifests { url: String } =>
            "{url} holds no manifest (pushed by an older git-lynx?), so nothing says what to keep; push again with this version, or expire objects with the store's lifecycle rules",
        BadManifest { name: String, why: String } =>
            "manifest {name} cannot be read ({why}); nothing was removed: remove it by hand if it is not Lynx's",
        LocalDamaged { path: String } =>
            "segment {path} is damaged (its bytes no longer match its name); run `git lynx doctor --repair`, index again, then push",
    }
}

/// The layers a reader asks for: (layer, fingerprint, keys).
pub type Wanted = Vec<(String, String, Vec<Key>)>;

#[cfg(not(feature = "remote-store"))]
mod client_stub {
    use super::*;
    pub struct RemoteStore;
    const NOT_BUILT: &str = "this build of git-lynx has no object store client (built without the `remote-store` feature); rebuild with default features";
    impl RemoteStore {
        pub fn open(_url: &str) -> Result<RemoteStore> {
            Err(crate::error::without("remote-store", "an object store client"))
        }
        pub fn url(&self) -> &str {
            ""
        }
    }
    pub fn fetch_into(_: &super::super::Store, url: &str, _: &Wanted) -> Fetched {
        Fetched { url: url.to_string(), error: Some(NOT_BUILT.into()), ..Default::default() }
    }
    pub fn fetch_commit(_: &super::super::Store, url: &str, _: &str, _: &dyn Fn(&str, &str) -> bool) -> Fetched {
        Fetched { url: url.to_string(), error: Some(NOT_BUILT.into()), ..Default::default() }
    }
    pub fn push(
        _: &super::super::Store,
        _: &str,
        _: &[(usize, String)],
        _: &[String],
        _: &crate::progress::Progress,
    ) -> Result<Pushed> {
        Err(crate::error::without("remote-store", "an object store client"))
    }
    pub fn gc(_: &str, _: &GcPolicy) -> Result<StoreGc> {
        Err(crate::error::without("remote-store", "an object store client"))
    }
}
#[cfg(not(feature = "remote-store"))]
pub use client_stub::*;

/// A shard group's directory: `catalog/<layer>-<fingerprint>/<1 hex>`.
fn group_dir(layer: &str, fingerprint: &str, group: u8) -> String {
    format!("catalog/{layer}-{fingerprint}/{group:x}")
}

/// The group of a key: its first hex digit.
fn group_of(k: &Key) -> u8 {
    k.0[0] >> 4
}

/// Shards of a group a reader reads before a push writes one holding them all.
const COMPACT_AFTER: usize = 8;

/// A shard file name's generation, when it is one of ours (`<8 digits>-<32 hex>.json.zst`).
fn shard_generation(file: &str) -> Option<u32> {
    let stem = file.strip_suffix(".json.zst")?;
    let (generation, hash) = stem.split_once('-')?;
    (generation.len() == 8
        && generation.bytes().all(|b| b.is_ascii_digit())
        && hash.len() == 32
        && hash.bytes().all(|b| b.is_ascii_hexdigit()))
    .then(|| generation.parse().ok())?
}

/// The body of a catalog shard.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Shard {
    format: String,
    layer: String,
    fingerprint: String,
    /// Shard files of the same group whose keys this one holds too.
    covers: Vec<String>,
    /// Segment name → the keys (hex) it holds rows of.
    segments: std::collections::BTreeMap<String, Vec<String>>,
}

const SHARD_FORMAT: &str = "lynx-remote-catalog-1";
/// The largest shard (compressed, and decompressed) a reader accepts.
const MAX_SHARD_BYTES: usize = 64 << 20;

fn key_hex(k: &Key) -> String {
    k.0.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_key(hex: &str) -> Option<Key> {
    if hex.len() != 66 {
        return None;
    }
    let mut k = [0u8; 33];
    for (i, b) in k.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(Key(k))
}

/// A segment name (`ab/<62 hex>`), lower-case.
fn valid_segment_name(name: &str) -> bool {
    name.len() == 65
        && name.as_bytes()[2] == b'/'
        && name.bytes().enumerate().all(|(i, b)| i == 2 || matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn decode_shard(bytes: &[u8], layer: &str, fingerprint: &str) -> Result<Shard> {
    use std::io::Read;
    let mut text = Vec::new();
    zstd::stream::read::Decoder::new(bytes)?.take(MAX_SHARD_BYTES as u64 + 1).read_to_end(&mut text)?;
    anyhow::ensure!(text.len() <= MAX_SHARD_BYTES, "it decompresses to more than {MAX_SHARD_BYTES} bytes");
    let shard: Shard = serde_json::from_slice(&text)?;
    anyhow::ensure!(
        shard.format == SHARD_FORMAT,
        "unknown format `{}`",
        shard.format.chars().take(40).collect::<String>()
    );
    anyhow::ensure!(
        shard.layer == layer && shard.fingerprint == fingerprint,
        "it describes another layer than its place says"
    );
    Ok(shard)
}

fn encode_shard(shard: &Shard) -> Result<Vec<u8>> {
    Ok(zstd::encode_all(serde_json::to_vec(shard)?.as_slice(), 3)?)
}

use std::collections::BTreeMap;

/// The body of a manifest: what one push published.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Manifest {
    format: String,
    /// The commits pushed (full ids).
    commits: Vec<String>,
    /// Every segment their views need, as the store's shards name them, with its layer and
    /// fingerprint (`<layer>-<fingerprint>`, as catalog directories are named).
    segments: BTreeMap<String, String>,
    /// When it was written (milliseconds since the epoch, the pusher's clock): orders pushes
    /// the store dates to the same second.
    #[serde(default)]
    pushed_ms: u64,
}

const MANIFEST_FORMAT: &str = "lynx-remote-manifest-1";

fn decode_manifest(bytes: &[u8]) -> Result<Manifest> {
    use std::io::Read;
    let mut text = Vec::new();
    zstd::stream::read::Decoder::new(bytes)?.take(MAX_SHARD_BYTES as u64 + 1).read_to_end(&mut text)?;
    anyhow::ensure!(text.len() <= MAX_SHARD_BYTES, "it decompresses to more than {MAX_SHARD_BYTES} bytes");
    let m: Manifest = serde_json::from_slice(&text)?;
    anyhow::ensure!(m.format == MANIFEST_FORMAT, "unknown format `{}`", m.format.chars().take(40).collect::<String>());
    Ok(m)
}

#[cfg(feature = "remote-store")]
mod client {
    use super::super::{Store, budget::MAX_SEGMENT_BYTES, pack};
    use super::*;
    use anyhow::Context;
    use futures_util::{StreamExt, TryStreamExt};
    use object_store::path::Path as StorePath;
    use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Requests in flight at once: segment transfers, and small catalog requests.
    const PARALLEL: usize = 8;
    const SMALL_PARALLEL: usize = 32;

    /// An opened store: the client, the prefix the layout sits under, and the runtime its
    /// calls run on (the rest of Lynx is not async).
    pub struct RemoteStore {
        url: String,
        store: Arc<dyn ObjectStore>,
        prefix: String,
        read_only: bool,
        pub(super) rt: tokio::runtime::Runtime,
    }

    fn unsupported(url: &str) -> anyhow::Error {
        let scheme = url.split("://").next().unwrap_or(url);
        RemoteError::Scheme { url: url.to_string(), scheme: scheme.to_string(), supported: super::SUPPORTED }.into()
    }

    /// Timeouts and retries short enough that an unreachable store costs seconds, not minutes.
    fn client_options() -> object_store::ClientOptions {
        object_store::ClientOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_timeout(Duration::from_secs(120))
    }

    fn retry() -> object_store::RetryConfig {
        object_store::RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(20),
            backoff: object_store::BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
        }
    }

    impl RemoteStore {
        /// Opens the store a URL names. Credentials come only from the environment's standard
        /// chain (`AWS_…` variables, then the instance's metadata service), never from a file
        /// in the repository.
        pub fn open(url: &str) -> Result<RemoteStore> {
            static TLS: std::sync::Once = std::sync::Once::new();
            // One TLS provider for the process (ring, as the model downloads use).
            TLS.call_once(|| {
                let _ = rustls::crypto::ring::default_provider().install_default();
            });
            let (scheme, rest) = url.split_once("://").ok_or_else(|| unsupported(url))?;
            let (store, prefix, read_only): (Arc<dyn ObjectStore>, String, bool) = match scheme {
                "s3" | "s3a" => {
                    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                    if bucket.is_empty() {
                        return Err(RemoteError::NoBucket { url: url.to_string() }.into());
                    }
                    // Lynx's timeouts first, so the environment (AWS_ALLOW_HTTP…) wins over them.
                    let mut b = object_store::aws::AmazonS3Builder::new()
                        .with_client_options(client_options())
                        .with_retry(retry());
                    for (k, v) in crate::env::aws_vars() {
                        if let Ok(key) = k.to_ascii_lowercase().parse() {
                            b = b.with_config(key, v);
                        }
                    }
                    let s = b.with_url(url).build().with_context(|| format!("opening the object store {url}"))?;
                    (Arc::new(s), prefix.trim_matches('/').to_string(), false)
                }
                "file" => {
                    let dir = std::path::Path::new(rest);
                    if !dir.is_absolute() {
                        return Err(RemoteError::RelativePath { url: url.to_string() }.into());
                    }
                    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
                    let s = object_store::local::LocalFileSystem::new_with_prefix(dir)
                        .with_context(|| format!("opening the object store {url}"))?;
                    (Arc::new(s), String::new(), false)
                }
                "https" | "http" => {
                    let s = object_store::http::HttpBuilder::new()
                        .with_url(url)
                        .with_client_options(client_options().with_allow_http(scheme == "http"))
                        .with_retry(retry())
                        .build()
                        .with_context(|| format!("opening the object store {url}"))?;
                    (Arc::new(s), String::new(), true)
                }
                _ => return Err(unsupported(url)),
            };
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the object store client's runtime")?;
            Ok(RemoteStore { url: url.to_string(), store, prefix, read_only, rt })
        }

        pub fn url(&self) -> &str {
            &self.url
        }

        pub(super) fn path(&self, rel: &str) -> StorePath {
            match self.prefix.is_empty() {
                true => StorePath::from(rel),
                false => StorePath::from(format!("{}/{rel}", self.prefix)),
            }
        }

        fn segment_path(&self, name: &str) -> StorePath {
            self.path(&format!("segments/{name}.parquet"))
        }

        /// Reads an object of at most `limit` bytes (the size is checked before and while
        /// reading: a server that says less and sends more is cut off).
        pub(super) async fn get_bounded(&self, path: &StorePath, limit: u64) -> Result<Vec<u8>> {
            let r = self.store.get(path).await?;
            if r.meta.size > limit {
                return Err(RemoteError::TooLarge { bytes: r.meta.size, limit }.into());
            }
            let mut out = Vec::with_capacity(r.meta.size as usize);
            let mut stream = r.into_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                if out.len() as u64 + chunk.len() as u64 > limit {
                    return Err(RemoteError::Longer { limit }.into());
                }
                out.extend_from_slice(&chunk);
            }
            Ok(out)
        }

        /// Every object under `rel`, with its size and time.
        async fn list_all(&self, rel: &str) -> Result<Vec<object_store::ObjectMeta>> {
            Ok(self.store.list(Some(&self.path(rel))).try_collect().await?)
        }

        /// The part of an object's location below the prefix.
        fn relative(&self, location: &StorePath) -> String {
            let full = location.as_ref();
            match self.prefix.is_empty() {
                true => full.to_string(),
                false => full.strip_prefix(&format!("{}/", self.prefix)).unwrap_or(full).to_string(),
            }
        }

        async fn collect(&self, policy: &GcPolicy) -> Result<StoreGc> {
            let mut out = StoreGc { url: self.url.clone(), dry_run: policy.dry_run, ..Default::default() };
            let now = chrono_now();
            let older =
                |m: &object_store::ObjectMeta, d: Duration| now - m.last_modified.timestamp() >= d.as_secs() as i64;
            // Manifests: the newest, and those within the keep period, are kept.
            let manifests = self.list_all("manifests").await?;
            if manifests.is_empty() {
                return Err(RemoteError::NoManifests { url: self.url.clone() }.into());
            }
            // Every manifest is read (they are small): one that cannot be is not Lynx's to judge.
            let mut read: Vec<(object_store::ObjectMeta, Manifest)> = Vec::with_capacity(manifests.len());
            for m in manifests {
                let bytes = self.get_bounded(&m.location, MAX_SHARD_BYTES as u64).await;
                let manifest = bytes.and_then(|b| decode_manifest(&b)).map_err(|e| RemoteError::BadManifest {
                    name: self.relative(&m.location),
                    why: format!("{e:#}"),
                })?;
                read.push((m, manifest));
            }
            read.sort_by_key(|(m, man)| (m.last_modified.timestamp(), man.pushed_ms, m.location.to_string()));
            let newest = read.len() - 1;
            let (kept, old): (Vec<_>, Vec<_>) =
                read.into_iter().enumerate().partition(|(i, (m, _))| *i == newest || !older(m, policy.keep));
            let mut reach: HashSet<String> = HashSet::new();
            for (_, (_, manifest)) in &kept {
                reach.extend(manifest.segments.keys().cloned());
            }
            // The commit pointers of the manifests that go.
            let gone_manifests: HashSet<String> = old
                .iter()
                .filter_map(|(_, (m, _))| {
                    let rel = self.relative(&m.location);
                    rel.strip_prefix("manifests/").and_then(|r| r.strip_suffix(".json.zst")).map(String::from)
                })
                .collect();
            let mut pointers: Vec<StorePath> = Vec::new();
            for m in self.list_all("commits").await? {
                let rel = self.relative(&m.location);
                if rel.rsplit('/').next().is_some_and(|id| gone_manifests.contains(id)) {
                    pointers.push(m.location);
                }
            }
            out.manifests_kept = kept.len();
            out.manifests_removed = old.len();
            // Segments no kept manifest names, past the grace period.
            let mut gone: HashSet<String> = HashSet::new();
            let mut doomed: Vec<StorePath> = Vec::new();
            for m in self.list_all("segments").await? {
                let rel = self.relative(&m.location);
                let Some(name) = rel.strip_prefix("segments/").and_then(|r| r.strip_suffix(".parquet")) else {
                    continue;
                };
                if !valid_segment_name(name) || reach.contains(name) || !older(&m, policy.grace) {
                    out.segments_kept += 1;
                    continue;
                }
                out.segments_removed += 1;
                out.bytes_removed += m.size;
                gone.insert(name.to_string());
                doomed.push(m.location);
            }
            // Shard groups that name a removed segment: one new shard per group with the rest,
            // covering the old files, which then go.
            let mut groups: BTreeMap<String, Vec<object_store::ObjectMeta>> = BTreeMap::new();
            for m in self.list_all("catalog").await? {
                let rel = self.relative(&m.location);
                if let Some((dir, file)) = rel.rsplit_once('/')
                    && shard_generation(file).is_some()
                {
                    groups.entry(dir.to_string()).or_default().push(m);
                }
            }
            let mut new_shards: Vec<(String, Vec<u8>)> = Vec::new();
            let mut old_shards: Vec<StorePath> = Vec::new();
            for (dir, files) in &groups {
                let Some((layer, fingerprint)) =
                    dir.strip_prefix("catalog/").and_then(|d| d.split('/').next()).and_then(|d| d.split_once('-'))
                else {
                    continue;
                };
                let mut merged: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
                let mut touched = false;
                let mut generation = 0;
                for m in files {
                    let file = self.relative(&m.location);
                    generation = generation.max(file.rsplit('/').next().and_then(shard_generation).unwrap_or(0));
                    let shard = match self.get_bounded(&m.location, MAX_SHARD_BYTES as u64).await {
                        Ok(b) => decode_shard(&b, layer, fingerprint),
                        Err(e) => Err(e),
                    };
                    // A shard that cannot be read is skipped, as readers skip it; if its group is
                    // written again, it goes with the others.
                    let Ok(shard) = shard else { continue };
                    for (seg, keys) in shard.segments {
                        if gone.contains(&seg) {
                            touched = true;
                        } else {
                            merged.entry(seg).or_default().extend(keys);
                        }
                    }
                }
                if !touched {
                    continue;
                }
                old_shards.extend(files.iter().map(|m| m.location.clone()));
                out.shards_removed += files.len();
                if merged.is_empty() {
                    continue;
                }
                let shard = Shard {
                    format: SHARD_FORMAT.into(),
                    layer: layer.to_string(),
                    fingerprint: fingerprint.to_string(),
                    covers: files
                        .iter()
                        .filter_map(|m| self.relative(&m.location).rsplit('/').next().map(String::from))
                        .collect(),
                    segments: merged.into_iter().map(|(s, k)| (s, k.into_iter().collect())).collect(),
                };
                let body = encode_shard(&shard)?;
                let hash = blake3::hash(&body).to_hex();
                new_shards.push((format!("{dir}/{:08}-{}.json.zst", generation + 1, &hash[..32]), body));
                out.shards_rewritten += 1;
            }
            if policy.dry_run {
                return Ok(out);
            }
            // New shards first (readers keep finding the segments that stay), then the removals.
            for (name, body) in new_shards {
                self.put_if_absent(&self.path(&name), body).await?;
            }
            let removals = old_shards
                .into_iter()
                .chain(doomed)
                .chain(pointers)
                .chain(old.into_iter().map(|(_, (m, _))| m.location));
            futures_util::stream::iter(removals)
                .map(|p| async move {
                    match self.store.delete(&p).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                        Err(e) => Err(anyhow::Error::from(e).context(format!("removing {p}"))),
                    }
                })
                .buffer_unordered(SMALL_PARALLEL)
                .try_collect::<Vec<()>>()
                .await?;
            Ok(out)
        }

        /// Writes an object unless it exists. Returns whether this call wrote it.
        pub(super) async fn put_if_absent(&self, path: &StorePath, bytes: Vec<u8>) -> Result<bool> {
            let payload = PutPayload::from(bytes);
            let opts = PutOptions { mode: PutMode::Create, ..Default::default() };
            match self.store.put_opts(path, payload.clone(), opts).await {
                Ok(_) => Ok(true),
                // Someone wrote the same name, so the same content: done.
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                // A store without conditional writes: names are content hashes, so writing
                // over an existing copy writes the same bytes.
                Err(object_store::Error::NotImplemented { .. }) => {
                    if self.store.head(path).await.is_ok() {
                        return Ok(false);
                    }
                    self.store.put(path, payload).await?;
                    Ok(true)
                }
                Err(e) => Err(e.into()),
            }
        }

        /// The shard files of every group of one (layer, fingerprint), newest generation first:
        /// one listing (paged by the store) rather than a request per group.
        async fn list_layer(&self, layer: &str, fingerprint: &str) -> Result<HashMap<u8, Vec<(u32, String)>>> {
            let prefix = self.path(&format!("catalog/{layer}-{fingerprint}"));
            let metas: Vec<object_store::ObjectMeta> = self.store.list(Some(&prefix)).try_collect().await?;
            let mut out: HashMap<u8, Vec<(u32, String)>> = HashMap::new();
            for m in metas {
                let parts: Vec<String> = m.location.parts().map(|p| p.as_ref().to_string()).collect();
                let [.., dir, file] = parts.as_slice() else { continue };
                let (Some(generation), Ok(first)) = (shard_generation(file), u8::from_str_radix(dir, 16)) else {
                    continue;
                };
                if dir.len() == 1 && dir.bytes().all(|b| b.is_ascii_hexdigit()) {
                    out.entry(first).or_default().push((generation, file.clone()));
                }
            }
            for files in out.values_mut() {
                files.sort_by(|a, b| b.cmp(a));
            }
            Ok(out)
        }

        /// The union of a group's shards (`listed`, newest first): key → segment, and how many
        /// shards were read. A damaged or forged shard is skipped with a warning (its keys are
        /// then misses).
        async fn read_group(
            &self,
            layer: &str,
            fingerprint: &str,
            first: u8,
            listed: &[(u32, String)],
        ) -> Result<(HashMap<Key, String>, usize)> {
            let dir = group_dir(layer, fingerprint, first);
            let mut covered: HashSet<String> = HashSet::new();
            let mut keys: HashMap<Key, String> = HashMap::new();
            let mut read = 0;
            for (_, file) in listed {
                if covered.contains(file) {
                    continue;
                }
                read += 1;
                let bytes = self.get_bounded(&self.path(&format!("{dir}/{file}")), MAX_SHARD_BYTES as u64).await;
                let shard = bytes.and_then(|b| decode_shard(&b, layer, fingerprint));
                let shard = match shard {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!("catalog shard {dir}/{file} of {} is refused: {e:#}", self.url);
                        continue;
                    }
                };
                covered.extend(shard.covers);
                for (seg, ks) in shard.segments {
                    if !valid_segment_name(&seg) {
                        continue;
                    }
                    for k in ks.iter().filter_map(|h| parse_key(h)).filter(|k| group_of(k) == first) {
                        keys.entry(k).or_insert_with(|| seg.clone());
                    }
                }
            }
            Ok((keys, read))
        }

        /// The groups `firsts` of one (layer, fingerprint): group → (listed files, key →
        /// segment, shards read). Groups without shards cost no request.
        async fn read_groups(
            &self,
            layer: &str,
            fingerprint: &str,
            firsts: &BTreeSet<u8>,
        ) -> Result<Vec<(u8, Vec<(u32, String)>, HashMap<Key, String>, usize)>> {
            let mut listing = self.list_layer(layer, fingerprint).await?;
            let todo: Vec<(u8, Vec<(u32, String)>)> =
                firsts.iter().map(|f| (*f, listing.remove(f).unwrap_or_default())).collect();
            futures_util::stream::iter(todo)
                .map(|(f, listed)| async move {
                    let (keys, read) = match listed.is_empty() {
                        true => (HashMap::new(), 0),
                        false => self.read_group(layer, fingerprint, f, &listed).await?,
                    };
                    Ok::<_, anyhow::Error>((f, listed, keys, read))
                })
                .buffer_unordered(SMALL_PARALLEL)
                .try_collect()
                .await
        }

        /// Key → segment for `keys` of one (layer, fingerprint), reading only their groups.
        fn lookup(&self, layer: &str, fingerprint: &str, keys: &[Key]) -> Result<HashMap<Key, String>> {
            let firsts: BTreeSet<u8> = keys.iter().map(group_of).collect();
            let groups = self.rt.block_on(self.read_groups(layer, fingerprint, &firsts))?;
            let wanted: HashSet<&Key> = keys.iter().collect();
            Ok(groups.into_iter().flat_map(|(_, _, k, _)| k).filter(|(k, _)| wanted.contains(k)).collect())
        }
    }

    /// Seconds since the epoch, as object times are compared.
    fn chrono_now() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
    }

    /// Keys each (store, layer, fingerprint) did not have when this process asked.
    static MISSED: std::sync::LazyLock<std::sync::Mutex<HashMap<(String, String, String), HashSet<Key>>>> =
        std::sync::LazyLock::new(Default::default);

    /// Remembers stores found unreachable, so a server asking every few seconds does not wait on
    /// a dead one each time (tried again after a minute).
    fn unreachable(url: &str, mark: bool) -> bool {
        static DOWN: std::sync::Mutex<Vec<(String, Instant)>> = std::sync::Mutex::new(Vec::new());
        let mut down = DOWN.lock().unwrap_or_else(|e| e.into_inner());
        down.retain(|(_, at)| at.elapsed() < Duration::from_secs(60));
        if mark {
            down.push((url.to_string(), Instant::now()));
        }
        down.iter().any(|(u, _)| u == url)
    }

    /// Downloads, checks and installs the segments the store has for `wanted`, into the local
    /// store. Never fails: a store that cannot be reached or read is one warning, and what it
    /// could not give is computed locally by the caller.
    pub fn fetch_into(local: &Store, url: &str, wanted: &Wanted) -> Fetched {
        let t0 = Instant::now();
        let mut out = Fetched { url: url.to_string(), ..Default::default() };
        // Keys this process already asked the store for in vain are not asked again: a blob
        // that is never stored (too large to index) or that nobody pushed costs one request,
        // not one with every question a server answers.
        let wanted: Wanted = {
            let missed = MISSED.lock().unwrap_or_else(|e| e.into_inner());
            wanted
                .iter()
                .map(|(l, f, keys)| {
                    let known = missed.get(&(url.to_string(), l.clone(), f.clone()));
                    let keys = keys.iter().filter(|k| !known.is_some_and(|m| m.contains(*k))).copied().collect();
                    (l.clone(), f.clone(), keys)
                })
                .collect()
        };
        let wanted = &wanted;
        out.asked = wanted.iter().map(|(_, _, k)| k.len()).sum();
        if out.asked == 0 {
            return out;
        }
        let warn = |e: &anyhow::Error| {
            let line = format!("{e:#}").split_whitespace().collect::<Vec<_>>().join(" ");
            tracing::warn!("the object store {url} could not be read ({line}); indexing here instead");
            line
        };
        if unreachable(url, false) {
            out.error = Some("unreachable a moment ago; not tried again yet".into());
            out.misses = out.asked;
            return out;
        }
        let result = (|| -> Result<()> {
            let remote = RemoteStore::open(url)?;
            // What the store names for each wanted key, and of which layer each segment is.
            let mut plan: BTreeMap<String, (String, String)> = BTreeMap::new();
            for (layer, fp, keys) in wanted {
                if keys.is_empty() {
                    continue;
                }
                let found = remote.lookup(layer, fp, keys)?;
                out.hits += found.len();
                let mut missed = MISSED.lock().unwrap_or_else(|e| e.into_inner());
                let m = missed.entry((url.to_string(), layer.clone(), fp.clone())).or_default();
                m.extend(keys.iter().filter(|k| !found.contains_key(*k)).copied());
                drop(missed);
                for seg in found.into_values() {
                    plan.entry(seg).or_insert_with(|| (layer.clone(), fp.clone()));
                }
            }
            plan.retain(|name, _| local.find_segment(name).is_none());
            if plan.is_empty() {
                return Ok(());
            }
            download_plan(&remote, local, url, &plan, &mut out)
        })();
        if let Err(e) = result {
            unreachable(url, true);
            out.error = Some(warn(&e));
        }
        out.misses = out.asked - out.hits.min(out.asked);
        out.seconds = t0.elapsed().as_secs_f64();
        out
    }

    /// Downloads the segments of `plan` (name → expected layer and fingerprint), checks each as
    /// an import is and installs those that pass; what failed is refused with its reason.
    fn download_plan(
        remote: &RemoteStore,
        local: &Store,
        url: &str,
        plan: &BTreeMap<String, (String, String)>,
        out: &mut Fetched,
    ) -> Result<()> {
        // A segment refused in this process a moment ago (missing, oversized, forged) is not
        // asked for again by the next round; after a while it is (a push may have mended it).
        let known_bad: HashSet<String> = {
            let mut refused = REFUSED.lock().unwrap_or_else(|e| e.into_inner());
            refused.retain(|_, at| at.elapsed() < REFUSED_FOR);
            refused.keys().filter(|(u, _)| u == url).map(|(_, n)| n.clone()).collect()
        };
        let plan: BTreeMap<String, (String, String)> =
            plan.iter().filter(|(n, _)| !known_bad.contains(*n)).map(|(n, l)| (n.clone(), l.clone())).collect();
        if plan.is_empty() {
            return Ok(());
        }
        let plan = &plan;
        let staging = crate::fsutil::temp_path_for(&local.root.join("remote-fetch"));
        std::fs::create_dir_all(&staging).with_context(|| format!("creating {}", staging.display()))?;
        let downloaded: Vec<(String, Result<Vec<u8>>)> = remote.rt.block_on(async {
            futures_util::stream::iter(plan.keys().cloned())
                .map(|name| {
                    let remote = &remote;
                    async move {
                        let r = remote.get_bounded(&remote.segment_path(&name), MAX_SEGMENT_BYTES).await;
                        (name, r)
                    }
                })
                .buffer_unordered(PARALLEL)
                .collect()
                .await
        });
        // Every download failed in transport (not a missing or oversized object): the
        // server went away after its catalog. One warning, as for an unreachable store,
        // not one per segment.
        let transport = |r: &Result<Vec<u8>>| {
            r.as_ref().err().and_then(|e| e.downcast_ref::<object_store::Error>()).is_some_and(|e| {
                !matches!(e, object_store::Error::NotFound { .. } | object_store::Error::PermissionDenied { .. })
            })
        };
        if downloaded.iter().all(|(_, r)| transport(r)) {
            let _ = std::fs::remove_dir_all(&staging);
            let (name, Err(e)) = &downloaded[0] else { unreachable!("every download failed") };
            return Err(RemoteError::Stopped { segments: plan.len(), name: name.clone(), why: format!("{e:#}") }.into());
        }
        let mut checked = Vec::new();
        let mut failed_reads = 0;
        for (name, bytes) in downloaded {
            let (layer, fp) = &plan[&name];
            let bytes = match bytes {
                Ok(b) => b,
                Err(e) => {
                    // A missing or oversized object: refused, its blobs computed here.
                    failed_reads += 1;
                    out.refused.push(format!("{name}: {e:#}"));
                    continue;
                }
            };
            let verdict = (|| -> Result<pack::Scanned> {
                if !pack::verify_name(&name, &bytes) {
                    return Err(RemoteError::Forged {}.into());
                }
                let s = pack::scan_bytes(bytes.clone().into())?;
                if (&s.layer, &s.fingerprint) != (layer, fp) {
                    return Err(RemoteError::OtherLayer {
                        found: format!("{} {}", s.layer, s.fingerprint),
                        expected: format!("{layer} {fp}"),
                    }
                    .into());
                }
                Ok(s)
            })();
            match verdict {
                Ok(s) => {
                    crate::fsutil::write_atomic(&staging.join(format!("{name}.parquet")), &bytes)?;
                    out.bytes += bytes.len() as u64;
                    checked.push((name, s));
                }
                Err(e) => out.refused.push(format!("{name}: {e:#}")),
            }
        }
        for r in &out.refused {
            tracing::warn!("refusing segment {r} (from {url}); its blobs are indexed here");
        }
        let mut refused = REFUSED.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        refused.extend(
            out.refused.iter().filter_map(|r| r.split(':').next()).map(|n| ((url.to_string(), n.to_string()), now)),
        );
        drop(refused);
        out.segments = checked.len();
        let installed = pack::install(local, &staging, checked);
        let _ = std::fs::remove_dir_all(&staging);
        installed?;
        if failed_reads > 0 && out.segments == 0 && out.refused.len() == failed_reads && failed_reads == plan.len() {
            // Nothing could be read at all: the store is likely down.
            unreachable(url, true);
        }
        Ok(())
    }

    /// Segments this process refused, per store, and when.
    static REFUSED: std::sync::LazyLock<std::sync::Mutex<HashMap<(String, String), Instant>>> =
        std::sync::LazyLock::new(Default::default);
    /// How long a refused segment is not asked for again.
    const REFUSED_FOR: Duration = Duration::from_secs(600);

    /// Commits whose manifest this process already looked for, per store.
    static LOOKED: std::sync::LazyLock<std::sync::Mutex<HashSet<(String, String)>>> =
        std::sync::LazyLock::new(Default::default);

    /// Downloads, checks and installs every segment a push's manifest names for `commit` of
    /// the layers `accept` takes (and that this store lacks): the whole view in two requests and
    /// one round of downloads, before any catalog shard is read. Once per commit and process;
    /// never fails (what it could not give is asked through the shards, then computed).
    pub fn fetch_commit(local: &Store, url: &str, commit: &str, accept: &dyn Fn(&str, &str) -> bool) -> Fetched {
        let t0 = Instant::now();
        let mut out = Fetched { url: url.to_string(), ..Default::default() };
        if !commit.bytes().all(|b| b.is_ascii_hexdigit())
            || unreachable(url, false)
            || !LOOKED.lock().unwrap_or_else(|e| e.into_inner()).insert((url.to_string(), commit.to_string()))
        {
            return out;
        }
        let result = (|| -> Result<()> {
            let remote = RemoteStore::open(url)?;
            let pointers = remote.rt.block_on(remote.list_all(&format!("commits/{commit}")))?;
            let Some(id) = pointers.iter().filter_map(|m| m.location.filename().map(String::from)).max() else {
                return Ok(());
            };
            if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(());
            }
            let path = remote.path(&format!("manifests/{id}.json.zst"));
            let manifest = decode_manifest(&remote.rt.block_on(remote.get_bounded(&path, MAX_SHARD_BYTES as u64))?)?;
            let mut plan: BTreeMap<String, (String, String)> = BTreeMap::new();
            for (name, layer) in manifest.segments {
                let Some((l, f)) = layer.split_once('-') else { continue };
                if valid_segment_name(&name) && accept(l, f) && local.find_segment(&name).is_none() {
                    plan.insert(name, (l.to_string(), f.to_string()));
                }
            }
            download_plan(&remote, local, url, &plan, &mut out)
        })();
        if let Err(e) = result {
            unreachable(url, true);
            let line = format!("{e:#}").split_whitespace().collect::<Vec<_>>().join(" ");
            tracing::warn!("the object store {url} could not be read ({line}); indexing here instead");
            out.error = Some(line);
        }
        out.seconds = t0.elapsed().as_secs_f64();
        out
    }

    /// Uploads what the store lacks of `segments` (local names, with their object directory),
    /// then the catalog shards that name them.
    pub fn push(
        local: &Store,
        url: &str,
        segments: &[(usize, String)],
        commits: &[String],
        progress: &crate::progress::Progress,
    ) -> Result<Pushed> {
        let t0 = Instant::now();
        let remote = RemoteStore::open(url)?;
        if remote.read_only {
            return Err(RemoteError::ReadOnly { url: url.to_string() }.into());
        }
        // The keys the local catalogs place in these segments, grouped as the shards are (the
        // catalogs, not the segments, are read: an up-to-date push reads no segment).
        type GroupKey = (String, String, u8);
        let wanted: HashSet<&str> = segments.iter().map(|(_, n)| n.as_str()).collect();
        let mut groups: BTreeMap<GroupKey, Vec<(Key, String)>> = BTreeMap::new();
        let mut named: BTreeSet<(String, String)> = BTreeSet::new();
        for dir in &local.dirs {
            let Ok(rd) = std::fs::read_dir(dir.join("catalog")) else { continue };
            for e in rd.flatten() {
                let file = e.file_name().to_string_lossy().into_owned();
                if let Some((layer, fp)) = file.strip_suffix(".cat").and_then(|n| n.split_once('-')) {
                    named.insert((layer.to_string(), fp.to_string()));
                }
            }
        }
        for (layer, fp) in &named {
            let cats = local.catalogs(layer, fp)?;
            for cat in &cats.per_dir {
                for (k, loc) in &cat.entries {
                    let seg = cat.segment_name(*loc);
                    if wanted.contains(seg) {
                        groups.entry((layer.clone(), fp.clone(), group_of(k))).or_default().push((*k, seg.to_string()));
                    }
                }
            }
        }
        // What the store's shards already name: one listing per layer, the touched groups read.
        let mut firsts: BTreeMap<(String, String), BTreeSet<u8>> = BTreeMap::new();
        for (l, f, first) in groups.keys() {
            firsts.entry((l.clone(), f.clone())).or_default().insert(*first);
        }
        let mut existing: Vec<(GroupKey, Vec<(u32, String)>, HashMap<Key, String>, usize)> = Vec::new();
        for ((l, f), fs) in &firsts {
            let read = remote
                .rt
                .block_on(remote.read_groups(l, f, fs))
                .with_context(|| format!("reading the catalog of {url}"))?;
            existing.extend(
                read.into_iter().map(|(first, listed, keys, read)| ((l.clone(), f.clone(), first), listed, keys, read)),
            );
        }
        let mut upload: BTreeSet<String> = BTreeSet::new();
        let mut shards: Vec<(String, u32, Shard)> = Vec::new();
        // The segments readers of these revisions will download: the store's own where its
        // shards already name a key (another machine pushed it first), else ours.
        let mut reach: BTreeMap<String, String> = BTreeMap::new();
        for (g, listed, known, read) in existing {
            let layer = format!("{}-{}", g.0, g.1);
            reach.extend(groups[&g].iter().map(|(k, s)| (known.get(k).unwrap_or(s).clone(), layer.clone())));
            let new: Vec<&(Key, String)> = groups[&g].iter().filter(|(k, _)| !known.contains_key(k)).collect();
            if new.is_empty() {
                continue;
            }
            // The new keys alone, or, once readers read many shards here, everything the group
            // holds (covering the shards listed: a reader then reads this one and newer ones).
            let compact = read + 1 > COMPACT_AFTER;
            let mut shard = Shard {
                format: SHARD_FORMAT.into(),
                layer: g.0.clone(),
                fingerprint: g.1.clone(),
                covers: if compact { listed.iter().map(|(_, f)| f.clone()).collect() } else { Vec::new() },
                segments: BTreeMap::new(),
            };
            let old = known.iter().filter(|_| compact).map(|(k, s)| (k, s.clone()));
            for (k, seg) in old.chain(new.iter().map(|(k, s)| (k, s.clone()))) {
                shard.segments.entry(seg).or_default().push(key_hex(k));
            }
            for ks in shard.segments.values_mut() {
                ks.sort();
                ks.dedup();
            }
            upload.extend(new.iter().map(|(_, s)| s.clone()));
            let generation = listed.first().map_or(1, |(g, _)| g + 1);
            shards.push((group_dir(&g.0, &g.1, g.2), generation, shard));
        }
        let by_name: HashMap<&String, usize> = segments.iter().map(|(d, n)| (n, *d)).collect();
        progress.start("uploading segments", upload.len() as u64);
        let results: Vec<Result<(bool, u64)>> = remote.rt.block_on(async {
            futures_util::stream::iter(upload.iter())
                .map(|name| {
                    let remote = &remote;
                    let path = local.segment_path(by_name[name], name);
                    async move {
                        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
                        if !pack::verify_name(name, &bytes) {
                            return Err(RemoteError::LocalDamaged { path: path.display().to_string() }.into());
                        }
                        let n = bytes.len() as u64;
                        let wrote = remote.put_if_absent(&remote.segment_path(name), bytes).await?;
                        progress.inc(1);
                        Ok((wrote, n))
                    }
                })
                .buffer_unordered(PARALLEL)
                .collect()
                .await
        });
        progress.finish();
        let mut out = Pushed { url: url.to_string(), segments: segments.len(), ..Default::default() };
        for r in results {
            let (wrote, n) = r.with_context(|| format!("uploading segments to {url}"))?;
            if wrote {
                out.uploaded += 1;
                out.bytes += n;
            }
        }
        out.skipped = segments.len() - out.uploaded;
        // Every segment is there: now the shards that name them.
        let written: Vec<Result<bool>> = remote.rt.block_on(async {
            futures_util::stream::iter(shards.iter())
                .map(|(dir, generation, shard)| {
                    let remote = &remote;
                    async move {
                        let body = encode_shard(shard)?;
                        let hash = blake3::hash(&body).to_hex();
                        let path = remote.path(&format!("{dir}/{generation:08}-{}.json.zst", &hash[..32]));
                        remote.put_if_absent(&path, body).await
                    }
                })
                .buffer_unordered(PARALLEL)
                .collect()
                .await
        });
        for w in written {
            w.with_context(|| format!("writing the catalog shards of {url}"))?;
            out.shards += 1;
        }
        // Last, the manifest: what a gc of the store keeps for these revisions. Named by its
        // content, so the same push twice writes it once.
        let pushed_ms =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let manifest =
            Manifest { format: MANIFEST_FORMAT.into(), commits: commits.to_vec(), segments: reach, pushed_ms };
        let body = zstd::encode_all(serde_json::to_vec(&manifest)?.as_slice(), 3)?;
        let name = format!("manifests/{}.json.zst", &blake3::hash(&body).to_hex()[..32]);
        remote
            .rt
            .block_on(remote.put_if_absent(&remote.path(&name), body))
            .with_context(|| format!("writing {name} to {url}"))?;
        // Then one pointer per commit (`commits/<id>/<manifest>`, empty): a reader at that
        // commit finds every segment it needs in two requests.
        let id = &name["manifests/".len()..name.len() - ".json.zst".len()];
        remote
            .rt
            .block_on(async {
                futures_util::stream::iter(commits.iter())
                    .map(|c| {
                        let remote = &remote;
                        let path = remote.path(&format!("commits/{c}/{id}"));
                        async move { remote.put_if_absent(&path, Vec::new()).await }
                    })
                    .buffer_unordered(SMALL_PARALLEL)
                    .try_collect::<Vec<bool>>()
                    .await
            })
            .with_context(|| format!("writing the commit pointers of {name} to {url}"))?;
        out.manifest = name;
        out.seconds = t0.elapsed().as_secs_f64();
        Ok(out)
    }

    /// Removes from the store what no kept manifest reaches: manifests older than the policy
    /// keeps (never the newest), then segments none of the kept ones names (past the grace
    /// period), and the catalog shards' entries for them (each group touched is written again
    /// as one shard covering the old ones, which are then removed).
    pub fn gc(url: &str, policy: &GcPolicy) -> Result<StoreGc> {
        let t0 = Instant::now();
        let remote = RemoteStore::open(url)?;
        if remote.read_only {
            return Err(RemoteError::ReadOnly { url: url.to_string() }.into());
        }
        let mut out = remote.rt.block_on(remote.collect(policy))?;
        out.seconds = t0.elapsed().as_secs_f64();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_and_keys_round_trip() {
        assert_eq!(shard_generation("00000003-0123456789abcdef0123456789abcdef.json.zst"), Some(3));
        assert_eq!(shard_generation("3-0123456789abcdef0123456789abcdef.json.zst"), None);
        assert_eq!(shard_generation("00000003-../../x.json.zst"), None);
        let k = Key::blob(&[0xab; 20], 7);
        assert_eq!(parse_key(&key_hex(&k)), Some(k));
        assert_eq!(parse_key("zz"), None);
        assert!(valid_segment_name(&format!("ab/{}", "c".repeat(62))));
        assert!(!valid_segment_name(&format!("../{}", "c".repeat(62))));
    }

    #[cfg(feature = "remote-store")]
    #[test]
    fn objects_over_the_limit_are_refused_and_writes_are_put_if_absent() {
        let dir = tempfile::tempdir().unwrap();
        let store = RemoteStore::open(&format!("file://{}", dir.path().display())).unwrap();
        let path = store.path("segments/ab/x.parquet");
        assert!(store.rt.block_on(store.put_if_absent(&path, vec![7u8; 100])).unwrap());
        // The same name again: someone else wrote it, which is success, and nothing changes.
        assert!(!store.rt.block_on(store.put_if_absent(&path, vec![9u8; 10])).unwrap());
        assert_eq!(store.rt.block_on(store.get_bounded(&path, 100)).unwrap(), vec![7u8; 100]);
        let e = store.rt.block_on(store.get_bounded(&path, 99)).unwrap_err();
        assert!(format!("{e:#}").contains("over the limit"), "{e:#}");
        for (url, says) in
            [("gs://b/x", "s3://"), ("az://c/x", "s3://"), ("s3:///x", "s3://bucket"), ("file://rel/dir", "absolute")]
        {
            let e = RemoteStore::open(url).err().unwrap();
            assert!(format!("{e:#}").contains(says), "{url}: {e:#}");
        }
    }

    #[test]
    fn a_shard_of_another_layer_is_refused() {
        let s = Shard {
            format: SHARD_FORMAT.into(),
            layer: "chunks".into(),
            fingerprint: "f".into(),
            ..Default::default()
        };
        let bytes = encode_shard(&s).unwrap();
        assert!(decode_shard(&bytes, "chunks", "f").is_ok());
        assert!(decode_shard(&bytes, "lexical", "f").is_err());
        assert!(decode_shard(b"not zstd", "chunks", "f").is_err());
    }
}
