//! The `outputSchema` of each MCP tool, generated from the result types of the operations it
//! runs: each kind of answer a tool gives is the envelope `--json` prints (`ok`, `operation`,
//! `view`) around that result's own fields; tools that ask every source add the fan-out shape
//! of `ops::over_sources`; every tool can answer with the failure shape of `ops::failure_json`.

use schemars::{Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::ops::registry::{Operation, Outputs, Shape};

/// One kind of answer: the schema of a result type, its own fields inline, compacted.
fn shape(s: Shape, g: &mut SchemaGenerator) -> Value {
    let mut schema = s(g);
    compact(&mut schema);
    schema.to_value()
}

/// Names and types only: the doc comments the schemas would carry are written for this code's
/// readers, and every client receives every tool's schema. A number may be null: JSON has no
/// NaN, and serde_json writes a non-finite float as null.
fn compact(schema: &mut Schema) {
    if let Some(o) = schema.as_object_mut() {
        for k in ["description", "title", "format", "minimum", "default"] {
            o.remove(k);
        }
        match o.get_mut("type") {
            Some(t @ Value::String(_)) if t == "number" => *t = json!(["number", "null"]),
            Some(Value::Array(types)) if types.iter().any(|t| t == "number") && !types.iter().any(|t| t == "null") => {
                types.push(json!("null"))
            }
            _ => {}
        }
    }
    schemars::transform::transform_subschemas(&mut compact, schema);
}

/// The output schema of an operation's tool: one of its answers' kinds, or the fan-out over
/// sources of the kinds it gives per source (a call that names no source where several are
/// configured asks each of them).
pub fn of<O: Operation>() -> Value {
    let Outputs { shapes, per_source } = O::OUTPUT;
    build(shapes, per_source)
}

fn build(shapes: &[Shape], per_source: &[Shape]) -> Value {
    let mut g = SchemaSettings::draft2020_12().for_serialize().with_transform(compact).into_generator();
    let mut any: Vec<Value> = shapes.iter().map(|s| envelope(shape(*s, &mut g), &mut g)).collect();
    if !per_source.is_empty() {
        let parts: Vec<Value> = per_source
            .iter()
            .map(|s| {
                let mut part = shape(*s, &mut g);
                let view = g.subschema_for::<crate::view::ViewId>().to_value();
                add(&mut part, "source", json!({"type": "string"}), true);
                add(&mut part, "view", view, false);
                part
            })
            .collect();
        let fan_out = json!({
            "type": "object",
            "properties": {
                "sources": {"type": "array", "items": {"anyOf": parts}},
                "skipped": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["sources", "skipped"]
        });
        any.push(envelope(fan_out, &mut g));
    }
    any.push(json!({
        "type": "object",
        "properties": {
            "ok": {"const": false},
            "operation": {"type": "string"},
            "error": {"type": "string"},
            "kind": {"enum": crate::error::Kind::ALL.map(crate::error::Kind::name)}
        },
        "required": ["ok", "operation", "error", "kind"]
    }));
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("anyOf".into(), Value::Array(any));
    let defs = g.take_definitions(true);
    if !defs.is_empty() {
        out.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(out)
}

/// A result's fields inside the answer envelope.
fn envelope(mut result: Value, g: &mut SchemaGenerator) -> Value {
    let view = g.subschema_for::<crate::view::ViewId>().to_value();
    add(&mut result, "ok", json!({"const": true}), true);
    add(&mut result, "operation", json!({"type": "string"}), true);
    add(&mut result, "view", view, false);
    add(
        &mut result,
        crate::ops::page::CUT_FIELD,
        json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        false,
    );
    result
}

fn add(schema: &mut Value, name: &str, property: Value, required: bool) {
    let Some(obj) = schema.as_object_mut() else { return };
    obj.insert("type".into(), json!("object"));
    if let Value::Object(p) = obj.entry("properties").or_insert_with(|| json!({})) {
        p.insert(name.into(), property);
    }
    if required
        && let Value::Array(r) = obj.entry("required").or_insert_with(|| json!([]))
        && !r.iter().any(|x| x == name)
    {
        r.push(json!(name));
    }
}
