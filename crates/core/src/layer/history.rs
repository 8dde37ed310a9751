//! The history layer: per commit, its subject, its time and the paths it changed (against its
//! first parent). Keyed by commit id, so every view whose history holds a commit shares its
//! row, and a commit's row never changes. A view turns the rows of the commits reachable from
//! its revision into a searchable field per file (`view::history`).

use crate::layer::column as col;
use crate::store::Key;
use anyhow::Result;
use arrow::array::{
    Array, ArrayRef, FixedSizeBinaryBuilder, Int64Array, ListArray, ListBuilder, RecordBatch, StringArray,
    StringBuilder,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

pub const HISTORY: &str = "history";
/// Bump when what a commit's row holds changes (2: a rename names both of its paths).
const VERSION: u32 = 2;

pub fn fingerprint() -> String {
    crate::fsutil::short_hash(&[HISTORY.as_bytes(), &VERSION.to_le_bytes()])
}

pub use crate::repo::history::{SUBJECT_MAX, bounded_subject};

/// What one commit contributes to the history of the files it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitFacts {
    pub key: Key,
    pub subject: String,
    pub time: i64,
    pub paths: Vec<String>,
}

/// A commit's key: its id, zero-padded, hint 0.
pub fn commit_key(id: &gix::ObjectId) -> Key {
    Key::blob(id.as_bytes(), 0)
}

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new("subject", DataType::Utf8, false),
        Field::new("time", DataType::Int64, false),
        Field::new("paths", DataType::List(Arc::new(Field::new("item", DataType::Utf8, false))), false),
    ]))
}

pub fn to_batch(facts: &[CommitFacts]) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    let mut key = FixedSizeBinaryBuilder::with_capacity(facts.len(), 33);
    let mut subject = StringBuilder::new();
    let mut time = Vec::with_capacity(facts.len());
    let mut paths =
        ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new("item", DataType::Utf8, false)));
    let mut keys = Vec::with_capacity(facts.len());
    for (i, f) in facts.iter().enumerate() {
        key.append_value(f.key.0)?;
        subject.append_value(&f.subject);
        time.push(f.time);
        for p in &f.paths {
            paths.values().append_value(p);
        }
        paths.append(true);
        keys.push((f.key, i as u32, 1));
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(key.finish()),
        Arc::new(subject.finish()),
        Arc::new(Int64Array::from(time)),
        Arc::new(paths.finish()),
    ];
    Ok((RecordBatch::try_new(schema(), cols)?, keys))
}

/// Row `row` of a decoded history segment.
pub fn read(batch: &RecordBatch, row: usize) -> Result<CommitFacts> {
    let key: &arrow::array::FixedSizeBinaryArray = col(batch, "key")?;
    let subject: &StringArray = col(batch, "subject")?;
    let time: &Int64Array = col(batch, "time")?;
    let paths: &ListArray = col(batch, "paths")?;
    if row >= batch.num_rows() {
        anyhow::bail!("history row {row} out of range");
    }
    let values = paths.value(row);
    let values: &StringArray =
        values.as_any().downcast_ref().ok_or_else(|| anyhow::anyhow!("history paths are not strings"))?;
    Ok(CommitFacts {
        key: Key(key.value(row).try_into()?),
        subject: bounded_subject(subject.value(row)).to_string(),
        time: time.value(row),
        paths: (0..values.len()).map(|i| values.value(i).to_string()).collect(),
    })
}

/// Commits for tests of what stores history: one with paths, a root without, one with an empty
/// subject, a negative time and a non-ASCII path.
#[cfg(test)]
pub(crate) fn sample() -> Vec<CommitFacts> {
    vec![
        CommitFacts {
            key: Key::blob(&[1; 20], 0),
            subject: "Fix retry backoff".into(),
            time: 7,
            paths: vec!["a.rs".into(), "b/c.rs".into()],
        },
        CommitFacts { key: Key::blob(&[2; 20], 0), subject: "Root".into(), time: 1, paths: vec![] },
        CommitFacts { key: Key::blob(&[3; 20], 0), subject: String::new(), time: -9, paths: vec!["ü.md".into()] },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_bounded_at_a_word_or_character_boundary() {
        assert_eq!(bounded_subject("short one"), "short one");
        let words = "word ".repeat(1000);
        let b = bounded_subject(&words);
        assert!(b.len() <= SUBJECT_MAX && b.ends_with("word"), "{}", b.len());
        let one = "é".repeat(SUBJECT_MAX);
        let b = bounded_subject(&one);
        assert!(b.len() <= SUBJECT_MAX && b.len() >= SUBJECT_MAX - 1);
    }

    #[test]
    fn roundtrip() {
        let facts = sample();
        let (batch, keys) = to_batch(&facts).unwrap();
        assert_eq!(keys[1], (facts[1].key, 1, 1));
        assert_eq!(read(&batch, 0).unwrap(), facts[0]);
        assert_eq!(read(&batch, 1).unwrap(), facts[1]);
        assert_eq!(read(&batch, 2).unwrap(), facts[2]);
        assert!(read(&batch, 3).is_err());
    }
}
