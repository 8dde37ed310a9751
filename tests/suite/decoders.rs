//! Every on-disk decoder fed damaged bytes: mutations of valid files (bit flips, truncations,
//! overwritten length fields, spliced garbage) for a bounded time each. A decoder may refuse
//! its input; it may never panic, and what it accepts must be safe to read in full.

use lynx_core::shard::{self, chunks::ChunkShard, postings::PostingsShard, vectors::VectorShard};
use lynx_core::store::catalog::Catalog;
use lynx_core::store::{Key, Store};
use std::path::Path;
use std::time::{Duration, Instant};

/// Time per decoder (CI keeps this bounded; a longer run: LYNX_FUZZ_SECS=60).
fn budget() -> Duration {
    Duration::from_millis(
        std::env::var("LYNX_FUZZ_SECS").ok().and_then(|s| s.parse::<f64>().ok()).map_or(2500, |s| (s * 1000.0) as u64),
    )
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One random mutation of `valid`.
fn mutate(rng: &mut Rng, valid: &[u8]) -> Vec<u8> {
    let mut b = valid.to_vec();
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len());
                if !b.is_empty() {
                    b[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => b.truncate(rng.below(b.len() + 1)),
        2 => {
            // A plausible-looking length or offset field overwritten with an extreme value.
            let i = rng.below(b.len().saturating_sub(8).max(1));
            let v: u64 = [u64::MAX, u32::MAX as u64, 1 << 31, 0, rng.next()][rng.below(5)];
            for (j, x) in v.to_le_bytes().iter().enumerate() {
                if let Some(slot) = b.get_mut(i + j) {
                    *slot = *x;
                }
            }
        }
        3 => {
            let at = rng.below(b.len() + 1);
            let junk: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next() as u8).collect();
            b.splice(at..at, junk);
        }
        4 => {
            let (from, to) = (rng.below(b.len()), rng.below(b.len()));
            if from < to {
                b.drain(from..to);
            }
        }
        _ => b = (0..rng.below(256)).map(|_| rng.next() as u8).collect(),
    }
    b
}

/// Runs `check` on mutations of `valid` until the budget is spent; returns (tried, accepted).
fn fuzz(name: &str, valid: &[u8], mut check: impl FnMut(&[u8]) -> bool) -> (usize, usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    let (mut tried, mut accepted) = (0, 0);
    let t = Instant::now();
    while t.elapsed() < budget() {
        let input = mutate(&mut rng, valid);
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&input)));
        match ok {
            Ok(a) => accepted += a as usize,
            Err(_) => panic!("{name}: the decoder panicked on a mutated input of {} bytes", input.len()),
        }
        tried += 1;
    }
    eprintln!("{name}: {tried} mutated inputs, {accepted} accepted, no panic");
    (tried, accepted)
}

/// A real store with every kind of segment and shard, made by the binary.
fn real_store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("r");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/a.py"), "class Cache:\n    def get(self, key):\n        return self.items.get(key)\n\n\ndef evict(cache):\n    cache.items.clear()\n").unwrap();
    std::fs::write(repo.join("README.md"), "# Title\n\nSome words about caches.\n").unwrap();
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@e")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@e")
            .output()
            .unwrap();
        assert!(o.status.success());
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "x"]);
    let model = format!("{}/tests/fixtures/models/tiny-static", env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_git-lynx"))
        .args(["--json", "--model", &model, "index"])
        .current_dir(&repo)
        .env("HF_HUB_OFFLINE", "1")
        .env("LYNX_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (dir, repo.join(".lynx"))
}

fn first_file(dir: &Path, ext: &str) -> std::path::PathBuf {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if e.path().to_string_lossy().ends_with(ext) {
                return e.path();
            }
        }
    }
    panic!("no {ext} under {}", dir.display());
}

fn segment_name(path: &Path) -> String {
    format!(
        "{}/{}",
        path.parent().unwrap().file_name().unwrap().to_string_lossy(),
        path.file_stem().unwrap().to_string_lossy()
    )
}

#[test]
fn decoders_never_panic_on_damaged_input() {
    let (_keep, lynx_dir) = real_store();
    let scratch = tempfile::tempdir().unwrap();
    let at = scratch.path().join("input");

    // Catalogs.
    let cat = std::fs::read(first_file(&lynx_dir.join("objects/catalog"), ".cat")).unwrap();
    fuzz("catalog", &cat, |b| match Catalog::decode(b) {
        Ok(c) => {
            for (k, _) in &c.entries {
                let _ = c.get(k).map(|l| c.segment_name(l).len());
            }
            true
        }
        Err(_) => false,
    });

    // Shards: open, then read everything the accepted file claims to hold.
    let chunks = first_file(&lynx_dir.join("cache/shards"), ".chunks");
    let name = segment_name(&chunks);
    fuzz("chunk shard", &std::fs::read(&chunks).unwrap(), |b| {
        std::fs::write(&at, b).unwrap();
        match ChunkShard::open(&at, &name) {
            Ok(s) => {
                for i in 0..s.rows() {
                    let r = s.row(i).unwrap();
                    let _ = (r.symbol.len(), r.kind.len(), s.text(i).map_or(0, str::len), s.meta(i).hash);
                }
                let _ = s.verify_texts();
                true
            }
            Err(_) => false,
        }
    });
    let postings = first_file(&lynx_dir.join("cache/shards"), ".postings");
    let name = segment_name(&postings);
    fuzz("postings shard", &std::fs::read(&postings).unwrap(), |b| {
        std::fs::write(&at, b).unwrap();
        match PostingsShard::open(&at, &name) {
            Ok(s) => {
                for t in ["cache", "get", "items", "evict", "zzz", ""] {
                    s.content(t, |row, tf| assert!(tf > 0 || row < u32::MAX));
                    s.symbol(t, |_, _| {});
                }
                for r in 0..s.rows() + 2 {
                    let _ = s.lengths(r);
                }
                true
            }
            Err(_) => false,
        }
    });
    let vectors = first_file(&lynx_dir.join("cache/shards"), ".vectors");
    let name = segment_name(&vectors);
    fuzz("vector shard", &std::fs::read(&vectors).unwrap(), |b| {
        std::fs::write(&at, b).unwrap();
        match VectorShard::open(&at, &name) {
            Ok(s) => {
                for r in 0..s.rows + 2 {
                    let _ = s.row_f32(r);
                }
                true
            }
            Err(_) => false,
        }
    });

    // Segments: damaged bytes are refused before the Parquet decoder sees them (a segment's
    // name is the hash of its bytes), and a catalog rebuild survives them.
    let seg = first_file(&lynx_dir.join("objects"), ".parquet");
    let seg_name = segment_name(&seg);
    let objects = scratch.path().join("objects");
    fuzz("segment", &std::fs::read(&seg).unwrap(), |b| {
        let p = objects.join(format!("{seg_name}.parquet"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b).unwrap();
        let accepted = lynx_core::store::read_segment_file(&p).is_ok();
        let _ = lynx_core::store::pack::rebuild_catalogs(&objects);
        accepted
    });

    // Configuration files (committed or local): refused with an error, never a panic.
    let cfg = b"[index]\nmax_file_size = 1000\nexclude = [\"a/**\"]\n[search]\nk = 5\nmode = \"sparse\"\n[[sources]]\nname = \"docs\"\npath = \"docs\"\n";
    let cfg_dir = scratch.path().join("cfg");
    std::fs::create_dir_all(cfg_dir.join(".lynx")).unwrap();
    fuzz("configuration", cfg, |b| {
        std::fs::write(cfg_dir.join("lynx.toml"), b).unwrap();
        lynx_core::config::Config::load(Some(&cfg_dir), &cfg_dir.join(".lynx")).is_ok()
    });

    // A store opened over damaged alternates files still opens.
    let store_root = scratch.path().join("store");
    std::fs::create_dir_all(store_root.join("objects/info")).unwrap();
    fuzz("alternates", b"/tmp\n# comment\n../other\n", |b| {
        std::fs::write(store_root.join("objects/info/alternates"), b).unwrap();
        Store::open(&store_root, &[]).is_ok()
    });
    let _ = Key::hash(&[0; 16]);
    let _ = shard::shards_dir(&store_root);
}
