//! History shards: a history segment's rows (per commit: key, subject, time, changed paths)
//! as flat tables and string heaps, so a view's history field reads the facts of a thousand
//! commits without decoding Parquet (which was a fifth of a first answer at a revision).

use super::{File, Invalid, Kind, Writer};
use crate::layer::history::CommitFacts;
use crate::store::Key;
use anyhow::Result;
use arrow::array::RecordBatch;
use std::path::Path;

/// Sections: keys (33 bytes a row), times (i64 a row), subject offsets (rows + 1), subject heap,
/// each row's first path (rows + 1), path offsets (paths + 1), path heap.
const KEYS: usize = 0;
const TIMES: usize = 1;
const SUBJECT_AT: usize = 2;
const SUBJECTS: usize = 3;
const ROW_PATHS: usize = 4;
const PATH_AT: usize = 5;
const PATHS: usize = 6;

pub struct HistoryShard {
    file: File,
    rows: usize,
}

impl HistoryShard {
    pub fn open(path: &Path, segment: &str) -> Result<HistoryShard> {
        let file = File::open(path, Kind::History, segment)?;
        let bad = |why: &str| -> anyhow::Error { Invalid(format!("history shard {}: {why}", path.display())).into() };
        let keys = file.bytes(KEYS)?;
        if keys.len() % 33 != 0 {
            return Err(bad("key table has a partial key"));
        }
        let rows = keys.len() / 33;
        if file.bytes(TIMES)?.len() != rows * 8 {
            return Err(bad("time table does not match the keys"));
        }
        // Offsets start at 0, never decrease and end at their tables' ends: every slice below
        // is in bounds.
        let monotonic = |v: &[u32], len: usize, end: usize| {
            v.len() == len && v[0] == 0 && v.windows(2).all(|w| w[0] <= w[1]) && *v.last().unwrap() as usize == end
        };
        let (subject_at, row_paths, path_at) = (file.u32s(SUBJECT_AT)?, file.u32s(ROW_PATHS)?, file.u32s(PATH_AT)?);
        if !monotonic(subject_at, rows + 1, file.bytes(SUBJECTS)?.len())
            || !monotonic(row_paths, rows + 1, path_at.len().saturating_sub(1))
            || path_at.is_empty()
            || !monotonic(path_at, path_at.len(), file.bytes(PATHS)?.len())
        {
            return Err(bad("offsets out of order or out of bounds"));
        }
        Ok(HistoryShard { file, rows })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `row`'s facts, if it is in range, holds `key` and its strings are UTF-8.
    pub fn facts(&self, row: usize, key: &Key) -> Option<CommitFacts> {
        if row >= self.rows || self.file.bytes(KEYS).ok()?.get(row * 33..(row + 1) * 33)? != key.0 {
            return None;
        }
        let time = i64::from_le_bytes(self.file.bytes(TIMES).ok()?.get(row * 8..(row + 1) * 8)?.try_into().ok()?);
        let text = |heap: usize, at: &[u32], i: usize| -> Option<String> {
            let bytes = self.file.bytes(heap).ok()?.get(at[i] as usize..at[i + 1] as usize)?;
            std::str::from_utf8(bytes).ok().map(str::to_string)
        };
        // Facts stored before subjects were bounded (or brought by a trusted import) are
        // bounded here, so what a view holds is the same whichever computed them.
        let subject = text(SUBJECTS, self.file.u32s(SUBJECT_AT).ok()?, row)?;
        let subject = match crate::layer::history::bounded_subject(&subject) {
            b if b.len() == subject.len() => subject,
            b => b.to_string(),
        };
        let (row_paths, path_at) = (self.file.u32s(ROW_PATHS).ok()?, self.file.u32s(PATH_AT).ok()?);
        let paths = (row_paths[row] as usize..row_paths[row + 1] as usize)
            .map(|p| text(PATHS, path_at, p))
            .collect::<Option<Vec<_>>>()?;
        Some(CommitFacts { key: *key, subject, time, paths })
    }
}

/// Builds the shard of segment `name` (in object directory `dir`) from the segment.
pub fn build(store: &crate::store::Store, dir: usize, name: &str) -> Result<()> {
    let batch = store.read_segment(dir, name)?;
    write(&store.root, name, &batch)
}

/// Writes the shard of a history segment from its decoded rows.
pub fn write(lynx_root: &Path, name: &str, batch: &RecordBatch) -> Result<()> {
    let rows: Vec<CommitFacts> =
        (0..batch.num_rows()).map(|r| crate::layer::history::read(batch, r)).collect::<Result<_>>()?;
    write_facts(lynx_root, name, &rows)
}

/// Writes the shard of a history segment holding `facts`, in row order.
pub fn write_facts(lynx_root: &Path, name: &str, facts: &[CommitFacts]) -> Result<()> {
    let too_large = || anyhow::anyhow!("history segment {name} is too large for a shard");
    let (mut keys, mut times, mut subjects, mut paths) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut subject_at, mut row_paths, mut path_at) = (vec![0u32], vec![0u32], vec![0u32]);
    for f in facts {
        keys.extend_from_slice(&f.key.0);
        times.extend_from_slice(&f.time.to_le_bytes());
        subjects.extend_from_slice(f.subject.as_bytes());
        subject_at.push(u32::try_from(subjects.len()).map_err(|_| too_large())?);
        for p in &f.paths {
            paths.extend_from_slice(p.as_bytes());
            path_at.push(u32::try_from(paths.len()).map_err(|_| too_large())?);
        }
        row_paths.push(u32::try_from(path_at.len() - 1).map_err(|_| too_large())?);
    }
    let mut w = Writer::new(Kind::History, name);
    w.section(keys);
    w.section(times);
    w.section_u32(&subject_at);
    w.section(subjects);
    w.section_u32(&row_paths);
    w.section_u32(&path_at);
    w.section(paths);
    w.write(lynx_root)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_read_back_and_a_wrong_key_or_damage_is_refused() {
        let facts = crate::layer::history::sample();
        let dir = tempfile::tempdir().unwrap();
        let (batch, _) = crate::layer::history::to_batch(&facts).unwrap();
        write(dir.path(), "ab/cd", &batch).unwrap();
        let path = super::super::shard_path(dir.path(), Kind::History, "ab/cd");
        let shard = HistoryShard::open(&path, "ab/cd").unwrap();
        assert_eq!(shard.rows(), 3);
        for (i, f) in facts.iter().enumerate() {
            assert_eq!(shard.facts(i, &f.key).as_ref(), Some(f));
        }
        assert_eq!(shard.facts(0, &facts[1].key), None, "another commit's row");
        assert_eq!(shard.facts(3, &facts[0].key), None, "past the end");
        let bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(4).position(|w| w == b"Root").unwrap();
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x20;
        std::fs::write(&path, &damaged).unwrap();
        assert!(HistoryShard::open(&path, "ab/cd").is_err(), "a damaged subject is refused at open");
    }
}
