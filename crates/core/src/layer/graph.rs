//! The graph-facts layer: per blob, its definitions, raw calls, raw bases, imports and
//! receiver-type hints and data access, one row per fact (columnar, so other tools can query them too).

use crate::chunk::data::{DataFact, DataKind};
use crate::chunk::defs::DefFact;
use crate::chunk::facts::{BaseFact, CallFact, Facts, ImportFact, RefFact, Relation, TypeHint};
use crate::layer::column as col;
use crate::store::Key;
use anyhow::Result;
use arrow::array::{
    ArrayRef, FixedSizeBinaryArray, FixedSizeBinaryBuilder, Int32Array, RecordBatch, StringArray, StringBuilder,
    UInt8Array, UInt32Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

const DEF: u8 = 0;
const CALL: u8 = 1;
const BASE: u8 = 2;
const IMPORT: u8 = 3;
const HINT: u8 = 4;
const DATA: u8 = 5;
const REF: u8 = 6;
/// A blob with no facts keeps one row so it counts as processed.
const NONE: u8 = 255;

pub struct BlobFacts {
    pub key: Key,
    pub facts: Facts,
}

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::FixedSizeBinary(33), false),
        Field::new("fact", DataType::UInt8, false),
        Field::new("a", DataType::Utf8, false),
        Field::new("b", DataType::Utf8, false),
        Field::new("c", DataType::Utf8, false),
        Field::new("line", DataType::UInt32, false),
        Field::new("end_line", DataType::UInt32, false),
        Field::new("ref", DataType::Int32, false),
        Field::new("flag", DataType::UInt8, false),
    ]))
}

#[derive(Default)]
struct Cols {
    key: Vec<Key>,
    fact: Vec<u8>,
    a: Vec<String>,
    b: Vec<String>,
    c: Vec<String>,
    line: Vec<u32>,
    end: Vec<u32>,
    r: Vec<i32>,
    flag: Vec<u8>,
}

impl Cols {
    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, key: Key, fact: u8, a: &str, b: &str, c: &str, line: u32, end: u32, r: i32, flag: u8) {
        self.key.push(key);
        self.fact.push(fact);
        self.a.push(a.to_string());
        self.b.push(b.to_string());
        self.c.push(c.to_string());
        self.line.push(line);
        self.end.push(end);
        self.r.push(r);
        self.flag.push(flag);
    }
}

pub fn to_batch(blobs: &[BlobFacts]) -> Result<(RecordBatch, Vec<(Key, u32, u32)>)> {
    let mut c = Cols::default();
    let mut keys = Vec::with_capacity(blobs.len());
    for b in blobs {
        let start = c.key.len() as u32;
        let f = &b.facts;
        for d in &f.defs {
            c.push(b.key, DEF, &d.name, &d.qualified, &d.kind, d.start_line, d.end_line, d.parent, d.test as u8);
        }
        for x in &f.calls {
            c.push(b.key, CALL, &x.name, &x.receiver, "", x.line, x.line, x.scope, x.member as u8);
        }
        for x in &f.bases {
            c.push(b.key, BASE, &x.name, "", x.relation.name(), 0, 0, x.def, 0);
        }
        for x in &f.imports {
            c.push(b.key, IMPORT, &x.module, &x.names.join("\n"), "", x.line, x.line, -1, 0);
        }
        for x in &f.types {
            c.push(b.key, HINT, &x.var, &x.ty, "", 0, 0, x.scope, 0);
        }
        // Data access: the kind in `flag`, the columns after the target in `b`.
        for x in &f.data {
            c.push(
                b.key,
                DATA,
                &x.name,
                &format!("{}\n{}", x.target, x.columns.join(",")),
                &x.access,
                x.line,
                x.line,
                x.scope,
                x.kind as u8,
            );
        }
        for x in &f.refs {
            c.push(b.key, REF, &x.name, &x.receiver, "", x.line, x.line, x.scope, 0);
        }
        if c.key.len() as u32 == start {
            c.push(b.key, NONE, "", "", "", 0, 0, -1, 0);
        }
        keys.push((b.key, start, c.key.len() as u32 - start));
    }
    let mut kb = FixedSizeBinaryBuilder::with_capacity(c.key.len(), 33);
    for k in &c.key {
        kb.append_value(k.0)?;
    }
    let strings = |v: &[String]| {
        let mut b = StringBuilder::new();
        for s in v {
            b.append_value(s);
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(kb.finish()),
        Arc::new(UInt8Array::from(c.fact)),
        strings(&c.a),
        strings(&c.b),
        strings(&c.c),
        Arc::new(UInt32Array::from(c.line)),
        Arc::new(UInt32Array::from(c.end)),
        Arc::new(Int32Array::from(c.r)),
        Arc::new(UInt8Array::from(c.flag)),
    ];
    Ok((RecordBatch::try_new(schema(), cols)?, keys))
}

/// Facts of rows `start..start+count` of a decoded graph segment.
pub fn read_facts(batch: &RecordBatch, start: usize, count: usize) -> Result<Facts> {
    let _key: &FixedSizeBinaryArray = col(batch, "key")?;
    let fact: &UInt8Array = col(batch, "fact")?;
    let a: &StringArray = col(batch, "a")?;
    let b: &StringArray = col(batch, "b")?;
    let c: &StringArray = col(batch, "c")?;
    let line: &UInt32Array = col(batch, "line")?;
    let end: &UInt32Array = col(batch, "end_line")?;
    let r: &Int32Array = col(batch, "ref")?;
    let flag: &UInt8Array = col(batch, "flag")?;
    let mut f = Facts::default();
    for i in start..start + count {
        match fact.value(i) {
            DEF => f.defs.push(DefFact {
                name: a.value(i).into(),
                qualified: b.value(i).into(),
                kind: c.value(i).into(),
                start_line: line.value(i),
                end_line: end.value(i),
                parent: r.value(i),
                test: flag.value(i) == 1,
            }),
            CALL => f.calls.push(CallFact {
                name: a.value(i).into(),
                receiver: b.value(i).into(),
                member: flag.value(i) == 1,
                line: line.value(i),
                scope: r.value(i),
            }),
            BASE => f.bases.push(BaseFact {
                def: r.value(i),
                name: a.value(i).into(),
                relation: Relation::from_name(c.value(i)),
            }),
            IMPORT => f.imports.push(ImportFact {
                module: a.value(i).into(),
                names: b.value(i).split('\n').filter(|s| !s.is_empty()).map(String::from).collect(),
                line: line.value(i),
            }),
            REF => f.refs.push(RefFact {
                name: a.value(i).into(),
                receiver: b.value(i).into(),
                line: line.value(i),
                scope: r.value(i),
            }),
            HINT => f.types.push(TypeHint { scope: r.value(i), var: a.value(i).into(), ty: b.value(i).into() }),
            DATA => {
                let Some(kind) = DataKind::from_u8(flag.value(i)) else { continue };
                let (target, cols) = b.value(i).split_once('\n').unwrap_or((b.value(i), ""));
                f.data.push(DataFact {
                    kind,
                    name: a.value(i).into(),
                    target: target.into(),
                    access: c.value(i).into(),
                    columns: cols.split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
                    line: line.value(i),
                    scope: r.value(i),
                });
            }
            _ => {}
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let facts = Facts {
            defs: vec![DefFact {
                name: "f".into(),
                qualified: "A.f".into(),
                kind: "method".into(),
                start_line: 2,
                end_line: 4,
                parent: 0,
                test: true,
            }],
            calls: vec![CallFact { name: "g".into(), receiver: "self".into(), member: true, line: 3, scope: 0 }],
            bases: vec![BaseFact { def: 0, name: "Base".into(), relation: Relation::Implements }],
            imports: vec![ImportFact { module: "os.path".into(), names: vec!["join".into(), "split".into()], line: 1 }],
            types: vec![TypeHint { scope: -1, var: "p".into(), ty: "Point".into() }],
            data: vec![DataFact {
                kind: DataKind::Sql,
                name: "orders".into(),
                target: String::new(),
                access: "write".into(),
                columns: vec!["total".into(), "id".into()],
                line: 3,
                scope: 0,
            }],
            refs: vec![RefFact { name: "handler".into(), receiver: String::new(), line: 3, scope: 0 }],
        };
        let blobs = vec![
            BlobFacts { key: Key::blob(&[1; 20], 1), facts: facts.clone() },
            BlobFacts { key: Key::blob(&[2; 20], 1), facts: Facts::default() },
        ];
        let (batch, keys) = to_batch(&blobs).unwrap();
        assert_eq!(keys[1], (blobs[1].key, 7, 1));
        assert_eq!(read_facts(&batch, 0, 7).unwrap(), facts);
        assert_eq!(read_facts(&batch, 7, 1).unwrap(), Facts::default());
    }
}
