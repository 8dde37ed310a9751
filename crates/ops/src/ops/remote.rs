//! `push` / `fetch`: the index shared through the git remote. The segments a revision's views
//! need are stored as git blobs in a commit on `refs/lynx/objects` whose tree is laid out as an
//! object directory (`ab/cdef….parquet`; catalogs left out, they are rebuilt). Each push adds a
//! commit on top of the remote's, so git sends only the segments the remote lacks, over its own
//! transport and authentication; `--prune` starts the ref again from the given revisions.
//! Fetching brings the ref to `refs/lynx/remotes/<remote>/objects` and imports the segments
//! this store lacks through `objects import`, so every blob's objects are checked against the
//! blob before use. Branches and tags are never touched.

use super::Answer;
use crate::engine::Engine;
use anyhow::{Context, Result};
use gix::ObjectId;
use std::collections::BTreeMap;
use std::process::Command;

crate::error::errors! {
    /// A remote that cannot be shared with.
    pub enum RemoteError: Usage {
        NotARemote { remote: String } => "`{remote}` is not a remote name or URL",
        NoIndex { remote: String, reference: &'static str } =>
            "{remote} has no Lynx index ({reference}); publish one with `git lynx push {remote}` where it is built (e.g. in CI)",
        NoStore { variable: &'static str } =>
            "no object store to push to: give one (`git lynx push --objects s3://bucket/prefix`), set {variable}, or set store.objects_url in .lynx/config.toml or your user configuration",
    }
}

crate::error::errors! {
    /// What goes wrong sharing segments through git itself.
    pub enum ShareError: Failure {
        Git { args: String, stderr: String } => "git {args} failed: {stderr}",
        TooLarge { reference: &'static str, remote: String, name: String, size: u64, limit: u64 } =>
            "refusing {reference} of {remote}: segment {name} is {size} bytes, over the limit of {limit} (nothing was imported)",
    }
}

/// The ref on the remote that holds the shared segments.
pub const REF: &str = "refs/lynx/objects";

/// Where the remote's ref is kept locally (it also keeps the segment blobs reachable, so a
/// later push can tell the remote what it already has).
pub fn tracking_ref(remote: &str) -> String {
    let simple = !remote.is_empty()
        && !remote.starts_with('.')
        && remote.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !remote.contains("..");
    if simple {
        format!("refs/lynx/remotes/{remote}/objects")
    } else {
        // A URL is not a ref name: name it by its hash.
        format!("refs/lynx/remotes/url-{}/objects", &blake3::hash(remote.as_bytes()).to_hex()[..16])
    }
}

/// Runs git in this repository with a fixed identity for the commits it makes (CI machines
/// often have none) and no prompt (a missing credential is an error, not a hang).
fn git(engine: &Engine, args: &[&str]) -> Result<String> {
    let repo = &engine.ws.repo;
    let mut cmd = Command::new("git");
    match &repo.workdir {
        Some(w) => cmd.arg("-C").arg(w),
        None => cmd.arg("--git-dir").arg(&repo.common_dir),
    };
    let out = cmd
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "git lynx")
        .env("GIT_AUTHOR_EMAIL", "git-lynx@localhost")
        .env("GIT_COMMITTER_NAME", "git lynx")
        .env("GIT_COMMITTER_EMAIL", "git-lynx@localhost")
        .output()
        .context("running git (is it installed and on PATH?)")?;
    if !out.status.success() {
        return Err(ShareError::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn check_remote(remote: &str) -> Result<()> {
    if remote.is_empty() || remote.starts_with('-') {
        return Err(RemoteError::NotARemote { remote: remote.to_string() }.into());
    }
    Ok(())
}

/// Brings the remote's ref to the tracking ref; None when the remote has none yet.
fn fetch_tip(engine: &Engine, remote: &str) -> Result<Option<ObjectId>> {
    let listed = git(engine, &["ls-remote", remote, REF]).with_context(|| format!("reaching the remote `{remote}`"))?;
    let Some(tip) = listed.split_whitespace().next() else { return Ok(None) };
    let tracking = tracking_ref(remote);
    git(engine, &["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, &format!("+{REF}:{tracking}")])?;
    let id = ObjectId::from_hex(tip.as_bytes()).with_context(|| format!("the remote answered `{tip}` for {REF}"))?;
    Ok(Some(id))
}

/// The segments of a commit's tree: `ab/cdef…` → blob id. Anything else in the tree (it came
/// from the remote, so it is untrusted) is ignored.
fn segments_of(engine: &Engine, commit: ObjectId) -> Result<BTreeMap<String, ObjectId>> {
    let repo = engine.ws.repo.local();
    let tree = repo.find_commit(commit).with_context(|| format!("reading {REF} commit {commit}"))?.tree()?;
    let mut out = BTreeMap::new();
    for dir in tree.iter() {
        let dir = dir?;
        let dname = dir.filename().to_string();
        if !(dname.len() == 2 && dname.bytes().all(|b| b.is_ascii_hexdigit()) && dir.mode().is_tree()) {
            continue;
        }
        let sub = repo.find_tree(dir.oid())?;
        for f in sub.iter() {
            let f = f?;
            let fname = f.filename().to_string();
            let Some(stem) = fname.strip_suffix(".parquet") else { continue };
            // Only segment names (62 hex digits): anything else, an overlong name included,
            // is not ours and is passed over rather than failing the fetch.
            if f.mode().is_blob() && stem.len() == 62 && stem.bytes().all(|b| b.is_ascii_hexdigit()) {
                out.insert(format!("{dname}/{stem}"), f.oid().to_owned());
            }
        }
    }
    Ok(out)
}

/// Writes the two-level tree of `segments` and returns its id.
fn write_tree(engine: &Engine, segments: &BTreeMap<String, ObjectId>) -> Result<ObjectId> {
    use gix::objs::tree::{Entry, EntryKind};
    let repo = engine.ws.repo.local();
    let mut dirs: BTreeMap<&str, Vec<Entry>> = BTreeMap::new();
    for (name, oid) in segments {
        let (dir, rest) = name.split_once('/').context("segment names are dir/rest")?;
        dirs.entry(dir).or_default().push(Entry {
            mode: EntryKind::Blob.into(),
            filename: format!("{rest}.parquet").into(),
            oid: *oid,
        });
    }
    let mut root = Vec::new();
    for (dir, mut entries) in dirs {
        entries.sort_by(|a, b| a.filename.cmp(&b.filename));
        let id = repo.write_object(gix::objs::Tree { entries })?.detach();
        root.push(Entry { mode: EntryKind::Tree.into(), filename: dir.into(), oid: id });
    }
    Ok(repo.write_object(gix::objs::Tree { entries: root })?.detach())
}

#[derive(Debug, serde::Serialize)]
pub struct Pushed {
    pub remote: String,
    #[serde(rename = "ref")]
    pub reference: &'static str,
    pub commit: Option<String>,
    /// Segments the ref holds after the push.
    pub segments: usize,
    /// Segments this push added (what git had to send).
    pub new_segments: usize,
    pub new_bytes: u64,
    pub pruned: bool,
    pub up_to_date: bool,
}

/// What `push` publishes, and where: the git remote, or a shared object store.
#[derive(clap::Args, Debug)]
pub struct PushArgs {
    /// The remote (name or URL).
    #[arg(default_value = "origin")]
    pub remote: String,
    /// Upload to a shared object store instead (s3://bucket/prefix, file:///dir): the
    /// segments it lacks, then its catalog shards. Without URL: LYNX_OBJECTS_URL, else
    /// store.objects_url of your own configuration.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "", conflicts_with = "prune")]
    pub objects: Option<String>,
    /// Revisions whose index to publish (repeatable; default: HEAD).
    #[arg(long = "rev", value_name = "REV")]
    pub revs: Vec<String>,
    /// Replace what the remote holds with these revisions' segments only (history dropped,
    /// so the remote can collect the rest).
    #[arg(long)]
    pub prune: bool,
}

/// What `fetch` brings in, and how far it trusts it.
#[derive(clap::Args, Debug)]
pub struct FetchArgs {
    /// The remote (name or URL).
    #[arg(default_value = "origin")]
    pub remote: String,
    /// Use the objects as they are (only for a remote you fully trust).
    #[arg(long)]
    pub trust: bool,
}

/// `push`: to the object store when `--objects` is given, else to the git remote.
pub fn push(engine: &Engine, args: &PushArgs) -> Result<Answer> {
    match &args.objects {
        Some(url) => push_objects(engine, Some(url.as_str()).filter(|u| !u.is_empty()), &args.revs),
        None => push_to_remote(engine, &args.remote, &args.revs, args.prune),
    }
}

fn push_to_remote(engine: &Engine, remote: &str, revs: &[String], prune: bool) -> Result<Answer> {
    check_remote(remote)?;
    // Index (and embed) what the revisions need, then collect their segments.
    let index_revs: Vec<String> = if revs.is_empty() { vec!["HEAD".into()] } else { revs.to_vec() };
    super::index::run(engine, &index_revs)?;
    let (needed, n_revs) = super::objects::needed_segments(engine, revs, &[])?;
    let ws = &engine.ws;
    // A concurrent push makes ours non-fast-forward: build on the new tip and try again.
    for attempt in 0..3 {
        let tip = fetch_tip(engine, remote)?;
        let mut tree: BTreeMap<String, ObjectId> = match (tip, prune) {
            (Some(t), false) => segments_of(engine, t)?,
            _ => BTreeMap::new(),
        };
        let before: std::collections::HashSet<String> = tree.keys().cloned().collect();
        let repo = ws.repo.local();
        let (mut new, mut bytes) = (0usize, 0u64);
        for (dir, name) in &needed {
            if tree.contains_key(name) {
                continue;
            }
            let path = ws.store.segment_path(*dir, name);
            let data = std::fs::read(&path).with_context(|| format!("reading segment {}", path.display()))?;
            let id = repo.write_blob(&data)?.detach();
            tree.insert(name.clone(), id);
            if !before.contains(name) {
                new += 1;
                bytes += data.len() as u64;
            }
        }
        if let (Some(t), false, 0) = (tip, prune, new) {
            let r = Pushed {
                remote: remote.into(),
                reference: REF,
                commit: Some(t.to_string()),
                segments: tree.len(),
                new_segments: 0,
                new_bytes: 0,
                pruned: false,
                up_to_date: true,
            };
            let text = format!(
                "{remote} {REF} already holds the {} segments of {n_revs} revision(s): nothing to send\n",
                needed.len()
            );
            return Ok(Answer::new("push", None, &r, text));
        }
        let tree_id = write_tree(engine, &tree)?.to_string();
        let msg = format!(
            "git lynx: {} segments ({new} new) for {}",
            tree.len(),
            if revs.is_empty() { "HEAD".to_string() } else { revs.join(" ") }
        );
        let mut args = vec!["commit-tree", tree_id.as_str(), "-m", msg.as_str()];
        let parent = tip.filter(|_| !prune).map(|t| t.to_string());
        if let Some(p) = &parent {
            args.extend(["-p", p.as_str()]);
        }
        let commit = git(engine, &args)?.trim().to_string();
        let spec = format!("{}{commit}:{REF}", if prune { "+" } else { "" });
        match git(engine, &["push", "--quiet", "--no-verify", remote, &spec]) {
            Ok(_) => {
                git(engine, &["update-ref", &tracking_ref(remote), &commit])?;
                let r = Pushed {
                    remote: remote.into(),
                    reference: REF,
                    commit: Some(commit.clone()),
                    segments: tree.len(),
                    new_segments: new,
                    new_bytes: bytes,
                    pruned: prune,
                    up_to_date: false,
                };
                let text = format!(
                    "pushed {new} new segments ({}) to {remote} {REF}; it holds {} segments{} (commit {})\n",
                    indicatif::HumanBytes(bytes),
                    tree.len(),
                    if prune { ", pruned to these revisions" } else { "" },
                    &commit[..12.min(commit.len())]
                );
                return Ok(Answer::new("push", None, &r, text));
            }
            Err(e) if attempt < 2 && format!("{e:#}").contains("rejected") => {
                tracing::info!("{REF} moved on {remote} while pushing; building on the new tip");
            }
            Err(e) => return Err(e.context(format!("pushing {REF} to {remote}"))),
        }
    }
    unreachable!("the loop returns")
}

/// `push --objects [URL]`: the segments the revisions' views need, uploaded to the shared
/// object store (what it lacks only), then the catalog shards naming them.
fn push_objects(engine: &Engine, url: Option<&str>, revs: &[String]) -> Result<Answer> {
    use crate::store::remote;
    let Some(store) = remote::configured(url, &engine.ws.config) else {
        return Err(RemoteError::NoStore { variable: crate::env::LYNX_OBJECTS_URL }.into());
    };
    let index_revs: Vec<String> = if revs.is_empty() { vec!["HEAD".into()] } else { revs.to_vec() };
    super::index::run(engine, &index_revs)?;
    let (needed, n_revs) = super::objects::needed_segments(engine, revs, &[])?;
    let needed: Vec<(usize, String)> = needed.into_iter().collect();
    let commits = index_revs
        .iter()
        .map(|r| engine.ws.repo.resolve(r).map(|c| c.commit.to_string()))
        .collect::<Result<Vec<_>>>()?;
    let r = remote::push(&engine.ws.store, &store.url, &needed, &commits, &engine.progress)
        .with_context(|| format!("pushing objects to {}", store.url))?;
    let text = format!(
        "{}: uploaded {} of the {} segments of {n_revs} revision(s) ({}; {} already there), {} catalog shard(s), in {:.1}s\n",
        store.url,
        r.uploaded,
        r.segments,
        indicatif::HumanBytes(r.bytes),
        r.skipped,
        r.shards,
        r.seconds
    );
    Ok(Answer::new("push", None, &r, text))
}

/// What `objects gc` keeps on a shared object store.
#[derive(clap::Args, Debug)]
pub struct StoreGcArgs {
    /// The store (s3://bucket/prefix, file:///dir); default: LYNX_OBJECTS_URL, else
    /// store.objects_url of your own configuration.
    pub url: Option<String>,
    /// Keep what the manifests of pushes from the last DAYS days reach (and the newest push's,
    /// whatever its age).
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    pub keep_days: u64,
    /// Never remove an object younger than this: a push uploads its segments before its
    /// manifest, so a push under way keeps its objects.
    #[arg(long, value_name = "HOURS", default_value_t = 24)]
    pub grace_hours: u64,
    /// Only report what would be removed.
    #[arg(long)]
    pub dry_run: bool,
}

/// `objects gc`: removes from a shared object store what no kept push manifest reaches.
pub fn store_gc(engine: &Engine, args: &StoreGcArgs) -> Result<Answer> {
    use crate::store::remote;
    let Some(store) = remote::configured(args.url.as_deref(), &engine.ws.config) else {
        return Err(RemoteError::NoStore { variable: crate::env::LYNX_OBJECTS_URL }.into());
    };
    let policy = remote::GcPolicy {
        keep: std::time::Duration::from_secs(args.keep_days.saturating_mul(86_400)),
        grace: std::time::Duration::from_secs(args.grace_hours.saturating_mul(3_600)),
        dry_run: args.dry_run,
    };
    let r = remote::gc(&store.url, &policy).with_context(|| format!("collecting {}", store.url))?;
    let verb = if r.dry_run { "would remove" } else { "removed" };
    let text = format!(
        "{}: {verb} {} of {} segments ({}) and {} of {} manifests; {} catalog group(s) rewritten, {} shard file(s) removed\n",
        store.url,
        r.segments_removed,
        r.segments_removed + r.segments_kept,
        indicatif::HumanBytes(r.bytes_removed),
        r.manifests_removed,
        r.manifests_removed + r.manifests_kept,
        r.shards_rewritten,
        r.shards_removed,
    );
    Ok(Answer::new("objects_gc", None, &r, text))
}

pub fn fetch(engine: &Engine, args: &FetchArgs) -> Result<Answer> {
    let (remote, trust) = (args.remote.as_str(), args.trust);
    check_remote(remote)?;
    let Some(tip) = fetch_tip(engine, remote)? else {
        return Err(RemoteError::NoIndex { remote: remote.to_string(), reference: REF }.into());
    };
    let ws = &engine.ws;
    let listed = segments_of(engine, tip)?;
    let missing: Vec<(&String, &ObjectId)> =
        listed.iter().filter(|(name, _)| ws.store.find_segment(name).is_none()).collect();
    if missing.is_empty() {
        let text = format!("{remote} {REF}: all {} segments are already here\n", listed.len());
        return Ok(Answer::new(
            "fetch",
            None,
            Fetched {
                remote: remote.to_string(),
                reference: REF,
                commit: tip.to_string(),
                segments: listed.len(),
                new_segments: 0,
                import: None,
            },
            text,
        ));
    }
    // Laid out as an object directory and imported: hashes, pipeline and blobs checked.
    let staging = crate::fsutil::temp_path_for(&ws.store.root.join("fetch"));
    let result = (|| -> Result<Answer> {
        let repo = ws.repo.local();
        let limit = crate::store::budget::MAX_SEGMENT_BYTES;
        for (name, oid) in &missing {
            // The size from the object's header, before a byte of it is inflated.
            let size = repo.find_header(**oid).with_context(|| format!("reading segment {name} of {REF}"))?.size();
            if size > limit {
                return Err(ShareError::TooLarge {
                    reference: REF,
                    remote: remote.to_string(),
                    name: name.to_string(),
                    size,
                    limit,
                }
                .into());
            }
            let data = repo.find_blob(**oid).with_context(|| format!("reading segment {name} of {REF}"))?.detach().data;
            crate::fsutil::write_atomic(&staging.join(format!("{name}.parquet")), &data)?;
        }
        super::objects::import(engine, &super::objects::ImportArgs { from: staging.clone(), trust })
    })();
    let _ = std::fs::remove_dir_all(&staging);
    let imported = result.with_context(|| format!("importing the segments of {remote} {REF}"))?;
    let text = format!(
        "fetched {} new of {} segments from {remote} {REF}\n{}",
        missing.len(),
        listed.len(),
        imported.text.replace(&staging.display().to_string(), "the fetched ref")
    );
    let fetched = Fetched {
        remote: remote.to_string(),
        reference: REF,
        commit: tip.to_string(),
        segments: listed.len(),
        new_segments: missing.len(),
        import: Some(imported.data),
    };
    Ok(Answer::new("fetch", None, fetched, text))
}

/// What `fetch` found on the remote's ref and brought in.
#[derive(Debug, serde::Serialize)]
pub struct Fetched {
    pub remote: String,
    #[serde(rename = "ref")]
    pub reference: &'static str,
    pub commit: String,
    pub segments: usize,
    pub new_segments: usize,
    /// The import's own answer (what was checked and adopted); absent when nothing was new.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import: Option<serde_json::Map<String, serde_json::Value>>,
}

results!(Pushed, crate::store::remote::Pushed, Fetched, crate::store::remote::StoreGc);
