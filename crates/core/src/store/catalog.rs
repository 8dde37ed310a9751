//! The catalog: for one (layer, fingerprint) in one object directory, which segment rows hold
//! each key. It is a cache: `rebuild` derives it from the segments themselves.

use super::{Key, Loc};
use crate::fsutil;
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

const MAGIC: &[u8; 8] = b"LYNXCAT1";

crate::error::errors! {
    /// A catalog file that is not what a catalog must be (damaged or foreign): its layer is
    /// rebuilt from the segments (`doctor --repair`).
    pub enum CatalogError: Failure {
        NotCatalog {} => "not a Lynx catalog file",
        Checksum {} => "catalog checksum mismatch (file is damaged)",
        MissingSegment {} => "catalog entry points at a missing segment",
        Unsorted {} => "catalog entries are not sorted",
        PastEnd { segment: String } =>
            "the catalog points past the end of segment {segment}; run `git lynx doctor --repair`",
    }
}

#[derive(Default, Clone, Debug)]
pub struct Catalog {
    /// Segment names (`ab/cdef…`) referenced by `Loc::seg`.
    pub segments: Vec<String>,
    /// Sorted by key; one entry per key (the first writer wins).
    pub entries: Vec<(Key, Loc)>,
    /// Where each range of key prefixes starts in `entries`, made at the first lookup (and
    /// dropped by every change to `entries`).
    buckets: OnceLock<Buckets>,
}

/// `starts[j]` is the first entry whose key's top `bits` bits are at least `j`: a lookup reads
/// one slot here and bisects the one or two entries of its range, where bisecting the whole
/// catalog cost a cache miss per step (a view's assembly looks up every file).
#[derive(Clone, Debug, Default)]
struct Buckets {
    bits: u32,
    starts: Vec<u32>,
}

impl Buckets {
    fn new(entries: &[(Key, Loc)]) -> Buckets {
        // About one entry per bucket.
        let bits = (usize::BITS - entries.len().leading_zeros()).clamp(1, 24);
        let mut starts = Vec::with_capacity((1usize << bits) + 1);
        for (i, (k, _)) in entries.iter().enumerate() {
            let j = (k.prefix() >> (64 - bits)) as usize;
            while starts.len() <= j {
                starts.push(i as u32);
            }
        }
        starts.resize((1usize << bits) + 1, entries.len() as u32);
        Buckets { bits, starts }
    }
}

/// Where `key` is in `entries` (sorted by key), through its bucket.
fn find(entries: &[(Key, Loc)], buckets: &Buckets, key: &Key) -> Option<usize> {
    let p = key.prefix();
    let j = (p >> (64 - buckets.bits)) as usize;
    let (lo, hi) = (buckets.starts[j] as usize, buckets.starts[j + 1] as usize);
    // The first eight bytes as one number order keys as their bytes do.
    entries[lo..hi].binary_search_by(|(k, _)| k.prefix().cmp(&p).then_with(|| k.cmp(key))).ok().map(|i| lo + i)
}

impl Catalog {
    pub fn get(&self, key: &Key) -> Option<Loc> {
        let buckets = self.buckets.get_or_init(|| Buckets::new(&self.entries));
        find(&self.entries, buckets, key).map(|i| self.entries[i].1)
    }

    pub fn segment_name(&self, loc: Loc) -> &str {
        &self.segments[loc.seg as usize]
    }

    /// Adds a segment's keys; keys already present keep their old location.
    pub fn add(&mut self, segment: &str, keys: &[(Key, u32, u32)]) {
        let seg = match self.segments.iter().position(|s| s == segment) {
            Some(i) => i as u32,
            None => {
                self.segments.push(segment.to_string());
                (self.segments.len() - 1) as u32
            }
        };
        let mut new: Vec<(Key, Loc)> = keys
            .iter()
            .filter(|(k, _, _)| self.get(k).is_none())
            .map(|&(k, row, count)| (k, Loc { seg, row, count }))
            .collect();
        if new.is_empty() {
            return;
        }
        new.sort_by_key(|a| a.0);
        new.dedup_by(|a, b| a.0 == b.0);
        let old = std::mem::take(&mut self.entries);
        self.entries = merge_sorted(old, new);
        self.buckets = OnceLock::new();
    }

    /// Adds a segment's keys, moving keys already present to it (a layer whose rows for a key
    /// are replaced by a newer import rather than derived once from the blob).
    pub fn replace(&mut self, segment: &str, keys: &[(Key, u32, u32)]) {
        let moved: std::collections::HashSet<&Key> = keys.iter().map(|(k, _, _)| k).collect();
        self.entries.retain(|(k, _)| !moved.contains(k));
        self.buckets = OnceLock::new();
        self.add(segment, keys);
    }

    /// Drops the given segments and every entry pointing at them (after gc or quarantine), so
    /// the catalog never names a segment that is gone.
    pub fn remove_segments(&mut self, names: &[String]) {
        let gone: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
        let mut renumber = vec![u32::MAX; self.segments.len()];
        let mut kept = Vec::with_capacity(self.segments.len());
        for (i, s) in self.segments.iter().enumerate() {
            if !gone.contains(s.as_str()) {
                renumber[i] = kept.len() as u32;
                kept.push(s.clone());
            }
        }
        self.buckets = OnceLock::new();
        self.entries.retain_mut(|(_, loc)| match renumber.get(loc.seg as usize) {
            Some(&n) if n != u32::MAX => {
                loc.seg = n;
                true
            }
            _ => false,
        });
        self.segments = kept;
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.entries.len() * 45 + self.segments.len() * 70);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.segments.len() as u32).to_le_bytes());
        for s in &self.segments {
            out.extend_from_slice(&(s.len() as u16).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for (k, loc) in &self.entries {
            out.extend_from_slice(&k.0);
            out.extend_from_slice(&loc.seg.to_le_bytes());
            out.extend_from_slice(&loc.row.to_le_bytes());
            out.extend_from_slice(&loc.count.to_le_bytes());
        }
        let sum = blake3::hash(&out);
        out.extend_from_slice(sum.as_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Catalog> {
        if bytes.len() < MAGIC.len() + 40 || &bytes[..8] != MAGIC {
            return Err(CatalogError::NotCatalog {}.into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 32);
        if blake3::hash(body).as_bytes() != sum {
            return Err(CatalogError::Checksum {}.into());
        }
        let mut r = Reader { b: body, pos: 8 };
        let nseg = r.u32()? as usize;
        let mut segments = Vec::with_capacity(nseg);
        for _ in 0..nseg {
            let len = r.u16()? as usize;
            segments.push(String::from_utf8(r.take(len)?.to_vec()).context("segment name is not UTF-8")?);
        }
        let n = r.u32()? as usize;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let mut k = [0u8; 33];
            k.copy_from_slice(r.take(33)?);
            let loc = Loc { seg: r.u32()?, row: r.u32()?, count: r.u32()? };
            if loc.seg as usize >= nseg {
                return Err(CatalogError::MissingSegment {}.into());
            }
            entries.push((Key(k), loc));
        }
        if !entries.is_sorted_by(|a, b| a.0 < b.0) {
            return Err(CatalogError::Unsorted {}.into());
        }
        Ok(Catalog { segments, entries, buckets: OnceLock::new() })
    }

    /// Reads a catalog file; a missing file is an empty catalog.
    pub fn load(path: &Path) -> Result<Catalog> {
        match std::fs::read(path) {
            Ok(bytes) => Catalog::decode(&bytes).with_context(|| format!("reading catalog {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Catalog::default()),
            Err(e) => Err(e).with_context(|| format!("reading catalog {}", path.display())),
        }
    }

    /// The catalog at `path` for reading, decoded once per version of the file in this
    /// process: a server assembles a view per revision, and decoding a large store's catalog
    /// (its checksum included) took a millisecond or more each time. A file's last 32 bytes are
    /// the checksum of the rest, so they and its length name its version.
    pub fn load_shared(path: &Path) -> Result<Arc<Catalog>> {
        type Loaded = HashMap<PathBuf, ((u64, [u8; 32]), Arc<Catalog>)>;
        static LOADED: OnceLock<Mutex<Loaded>> = OnceLock::new();
        let version = match checksum_of(path) {
            Ok(Some(v)) => v,
            // Missing, or too short to be a catalog: the full read says which.
            Ok(None) => return Catalog::load(path).map(Arc::new),
            Err(e) => return Err(e).with_context(|| format!("reading catalog {}", path.display())),
        };
        let loaded = LOADED.get_or_init(Default::default);
        if let Some((v, c)) = loaded.lock().unwrap().get(path)
            && *v == version
        {
            return Ok(c.clone());
        }
        let bytes = std::fs::read(path).with_context(|| format!("reading catalog {}", path.display()))?;
        let c = Arc::new(Catalog::decode(&bytes).with_context(|| format!("reading catalog {}", path.display()))?);
        // The version is what was decoded, not what the file held a moment before.
        let version = (bytes.len() as u64, bytes[bytes.len() - 32..].try_into().unwrap());
        let mut map = loaded.lock().unwrap();
        // A handful of layers and fingerprints per store; more means stores come and go (tests).
        if map.len() >= 64 {
            map.clear();
        }
        map.insert(path.to_path_buf(), (version, c.clone()));
        Ok(c)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        fsutil::write_atomic(path, &self.encode())
    }
}

/// The length and trailing checksum of a catalog file; None when it is missing or too short.
fn checksum_of(path: &Path) -> std::io::Result<Option<(u64, [u8; 32])>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    if len < (MAGIC.len() + 40) as u64 {
        return Ok(None);
    }
    f.seek(SeekFrom::Start(len - 32))?;
    let mut sum = [0u8; 32];
    f.read_exact(&mut sum)?;
    Ok(Some((len, sum)))
}

pub fn catalog_path(objects: &Path, layer: &str, fingerprint: &str) -> PathBuf {
    objects.join("catalog").join(format!("{layer}-{fingerprint}.cat"))
}

fn merge_sorted(a: Vec<(Key, Loc)>, b: Vec<(Key, Loc)>) -> Vec<(Key, Loc)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].0 <= b[j].0 {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self.b.get(self.pos..self.pos + n).context("catalog file is truncated")?;
        self.pos += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_found_and_no_other() {
        // Uneven spreads too: clustered prefixes, equal prefixes, a few far outliers.
        let mut rng = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for n in [0usize, 1, 5, 31, 32, 33, 1000, 5000] {
            let mut keys: Vec<Key> = (0..n)
                .map(|i| {
                    let mut oid = [0u8; 20];
                    let v = match i % 4 {
                        0 => next(),
                        1 => next() >> 40,
                        2 => 0x1234_5678_0000_0000 | (next() & 0xff),
                        _ => u64::MAX - (next() >> 50),
                    };
                    oid[..8].copy_from_slice(&v.to_be_bytes());
                    oid[8..16].copy_from_slice(&next().to_be_bytes());
                    Key::blob(&oid, (i % 3) as u8)
                })
                .collect();
            keys.sort();
            keys.dedup();
            let entries: Vec<(Key, Loc)> =
                keys.iter().enumerate().map(|(i, &k)| (k, Loc { seg: 0, row: i as u32, count: 1 })).collect();
            let buckets = Buckets::new(&entries);
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(find(&entries, &buckets, k), Some(i), "n {n}, key {i}");
                let mut other = *k;
                other.0[19] ^= 0x55;
                assert_eq!(
                    find(&entries, &buckets, &other),
                    entries.binary_search_by(|(e, _)| e.cmp(&other)).ok(),
                    "n {n}"
                );
            }
        }
    }

    fn key(b: u8) -> Key {
        let mut k = [0u8; 33];
        k[0] = b;
        Key(k)
    }

    #[test]
    fn a_shared_catalog_is_decoded_once_per_version_of_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chunks-x.cat");
        assert!(Catalog::load_shared(&path).unwrap().entries.is_empty(), "a missing catalog is empty");
        let mut c = Catalog::default();
        c.add("aa/one", &[(key(1), 0, 1)]);
        c.save(&path).unwrap();
        let first = Catalog::load_shared(&path).unwrap();
        assert_eq!(first.get(&key(1)), Some(Loc { seg: 0, row: 0, count: 1 }));
        assert!(Arc::ptr_eq(&first, &Catalog::load_shared(&path).unwrap()), "unchanged: not decoded again");
        let loaded = || crate::store::Catalogs { per_dir: vec![Catalog::load_shared(&path).unwrap()] };
        let before = loaded();
        assert!(before.same_as(&loaded()));
        // A writer replaces the file with one of the same length: the new version is read.
        let mut d = Catalog::default();
        d.add("aa/one", &[(key(2), 0, 1)]);
        assert_eq!(d.encode().len(), c.encode().len());
        d.save(&path).unwrap();
        let second = Catalog::load_shared(&path).unwrap();
        assert_eq!(second.get(&key(1)), None);
        assert_eq!(second.get(&key(2)), Some(Loc { seg: 0, row: 0, count: 1 }));
        assert!(!before.same_as(&loaded()), "a changed catalog is a new state");
        // A damaged file is an error, as it is for a plain load.
        let mut bad = d.encode();
        let n = bad.len();
        bad[n - 40] ^= 1;
        bad[n - 1] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert!(Catalog::load_shared(&path).is_err());
    }

    #[test]
    fn roundtrip_and_first_writer_wins() {
        let mut c = Catalog::default();
        c.add("aa/one", &[(key(3), 0, 2), (key(1), 2, 1)]);
        c.add("bb/two", &[(key(1), 0, 5), (key(2), 5, 1)]);
        assert_eq!(c.get(&key(1)), Some(Loc { seg: 0, row: 2, count: 1 }));
        assert_eq!(c.get(&key(2)), Some(Loc { seg: 1, row: 5, count: 1 }));
        let d = Catalog::decode(&c.encode()).unwrap();
        assert_eq!(d.entries, c.entries);
        assert_eq!(d.segments, c.segments);
        // Removing a segment renumbers the others and drops its name.
        let mut r = c.clone();
        r.remove_segments(&["aa/one".to_string()]);
        assert_eq!(r.segments, vec!["bb/two".to_string()]);
        assert_eq!(r.get(&key(1)), None);
        assert_eq!(r.get(&key(2)), Some(Loc { seg: 0, row: 5, count: 1 }));
        assert_eq!(r.get(&key(3)), None);
        let mut bad = c.encode();
        let n = bad.len();
        bad[n - 40] ^= 1;
        assert!(Catalog::decode(&bad).unwrap_err().to_string().contains("checksum"));
    }
}
