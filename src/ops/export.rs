//! `export_graph`: one self-contained, offline HTML file (inline data, inline script, SVG) for
//! a symbol's blast radius or a module's hub, written under `.lynx/reports/`.

use super::nav::open;
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::model::{Node, Rel};
use crate::graph::query::{self, node_ref};
use anyhow::Result;
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

pub struct ExportArgs {
    pub symbol: Option<String>,
    pub module: Option<String>,
    pub out: Option<PathBuf>,
    pub depth: usize,
    pub rev: Option<String>,
}

#[derive(Serialize)]
struct JsNode {
    id: usize,
    name: String,
    kind: String,
    path: String,
    line: u32,
    root: bool,
    test: bool,
}

#[derive(Serialize)]
struct JsEdge {
    source: usize,
    target: usize,
    relation: &'static str,
}

const MAX_EXPORT_NODES: usize = 300;

pub fn run(engine: &Engine, a: &ExportArgs) -> Result<Answer> {
    let ctx = open(engine, a.rev.as_deref())?;
    let g = &ctx.graph;
    let (roots, title): (Vec<Node>, String) = match (&a.symbol, &a.module) {
        (Some(s), _) => {
            let (defs, _) = query::match_symbol(g, s);
            (defs.into_iter().take(3).map(Node::Def).collect(), format!("blast radius of {s}"))
        }
        (None, Some(m)) => {
            let m = m.trim_start_matches("./");
            (g.by_path.get(m).map(|&f| vec![Node::File(f)]).unwrap_or_default(), format!("module {m}"))
        }
        _ => return Err(crate::error::usage("export_graph needs a symbol or a module (`--symbol` / `--module`; in MCP `symbol` / `module`, or LynxMCP's `target` with `mode`)")),
    };
    let target = a.symbol.clone().or(a.module.clone()).unwrap_or_default();
    if roots.is_empty() {
        let text = format!("{}\nnothing named \"{target}\" in this view (matched: false)\n", view_line(&ctx.data.id));
        return Ok(Answer::new("export_graph", Some(ctx.data.id.clone()), serde_json::json!({"matched": false, "symbol": target}), text));
    }
    // The neighbourhood: callers (blast radius) and callees / imports and dependents.
    let rels: Vec<Rel> = if a.module.is_some() && a.symbol.is_none() {
        vec![Rel::Imports, Rel::Contains, Rel::Calls]
    } else {
        vec![Rel::Calls, Rel::Extends, Rel::Implements, Rel::ExtendsOrImplements]
    };
    let mut set: Vec<Node> = roots.clone();
    let mut seen: HashSet<Node> = roots.iter().copied().collect();
    for (dir, depth) in [(Direction::Incoming, a.depth.max(1)), (Direction::Outgoing, 1)] {
        let mut frontier = roots.clone();
        for _ in 0..depth {
            let mut next = Vec::new();
            for n in &frontier {
                for e in g.g.edges_directed(g.node_of(*n), dir) {
                    if !rels.contains(&e.weight().rel) {
                        continue;
                    }
                    let other = g.g[if dir == Direction::Outgoing { e.target() } else { e.source() }];
                    if set.len() < MAX_EXPORT_NODES && seen.insert(other) {
                        set.push(other);
                        next.push(other);
                    }
                }
            }
            frontier = next;
        }
    }
    let index: HashMap<Node, usize> = set.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let nodes: Vec<JsNode> = set
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let r = node_ref(g, n);
            JsNode { id: i, name: r.name, kind: r.kind, path: r.path.unwrap_or_default(), line: r.start_line.unwrap_or(0), root: roots.contains(&n), test: r.test }
        })
        .collect();
    let mut edges = Vec::new();
    for &n in &set {
        for e in g.g.edges_directed(g.node_of(n), Direction::Outgoing) {
            if !rels.contains(&e.weight().rel) {
                continue;
            }
            if let Some(&t) = index.get(&g.g[e.target()]) {
                edges.push(JsEdge { source: index[&n], target: t, relation: e.weight().rel.name() });
            }
        }
    }
    let out = match &a.out {
        Some(p) => p.clone(),
        None => {
            let safe: String = target.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
            engine.ws.store.root.join("reports").join(format!("graph-{safe}.html"))
        }
    };
    let data = serde_json::json!({ "title": title, "view": ctx.data.id.label, "nodes": nodes, "edges": edges });
    let html = render_html(&title, &data.to_string());
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::fsutil::write_atomic(&out, html.as_bytes())?;
    let truncated = set.len() >= MAX_EXPORT_NODES;
    let text = format!(
        "{}\nwrote {} ({} nodes, {} edges{}) — open it in a browser; it needs no network\n",
        view_line(&ctx.data.id),
        out.display(),
        nodes.len(),
        edges.len(),
        if truncated { ", truncated" } else { "" }
    );
    Ok(Answer::new(
        "export_graph",
        Some(ctx.data.id.clone()),
        serde_json::json!({"matched": true, "symbol": target, "path": out.display().to_string(), "nodes": nodes.len(), "edges": edges.len(), "truncated": truncated}),
        text,
    ))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn render_html(title: &str, data_json: &str) -> String {
    // `</` cannot appear inside the inline script.
    let data = data_json.replace("</", "<\\/");
    format!(
        r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ margin: 0; font: 13px system-ui, sans-serif; display: flex; height: 100vh; }}
#side {{ width: 300px; overflow: auto; border-right: 1px solid #ddd; padding: 8px; }}
#side li {{ cursor: pointer; margin: 2px 0; }} #side li.root {{ font-weight: bold; }}
svg {{ flex: 1; }} .node circle {{ stroke: #333; stroke-width: 1; }} .node text {{ font-size: 10px; }}
line {{ stroke: #999; }} line.extends, line.implements, line.extends_or_implements {{ stroke: #c60; stroke-dasharray: 4 2; }}
line.imports {{ stroke: #36c; }}
</style></head>
<body><div id="side"><h3>{title}</h3><div id="meta"></div><ul id="nodes"></ul></div>
<svg id="graph" width="1000" height="800"></svg>
<script>
const data = {data};
const svg = document.getElementById('graph');
const NS = 'http://www.w3.org/2000/svg';
const W = svg.clientWidth || 1000, H = svg.clientHeight || 800;
const color = k => ({{function:'#6a6',method:'#6a6',constructor:'#6a6',class:'#c66',struct:'#c66',interface:'#c9c',trait:'#c9c',file:'#69c',external:'#bbb'}})[k] || '#aaa';
document.getElementById('meta').textContent = data.nodes.length + ' nodes, ' + data.edges.length + ' edges, view ' + data.view;
const n = data.nodes.map((d, i) => Object.assign({{x: W/2 + 200*Math.cos(i), y: H/2 + 200*Math.sin(i), vx: 0, vy: 0}}, d));
for (let it = 0; it < 300; it++) {{
  for (let i = 0; i < n.length; i++) for (let j = i + 1; j < n.length; j++) {{
    let dx = n[i].x - n[j].x, dy = n[i].y - n[j].y, d2 = dx*dx + dy*dy + 0.01, f = 800 / d2;
    n[i].vx += dx*f; n[i].vy += dy*f; n[j].vx -= dx*f; n[j].vy -= dy*f;
  }}
  for (const e of data.edges) {{
    const a = n[e.source], b = n[e.target]; const dx = b.x - a.x, dy = b.y - a.y;
    a.vx += dx*0.01; a.vy += dy*0.01; b.vx -= dx*0.01; b.vy -= dy*0.01;
  }}
  for (const p of n) {{ p.vx += (W/2 - p.x)*0.002; p.vy += (H/2 - p.y)*0.002; p.x += Math.max(-20, Math.min(20, p.vx)); p.y += Math.max(-20, Math.min(20, p.vy)); p.vx *= 0.5; p.vy *= 0.5; }}
}}
for (const e of data.edges) {{
  const l = document.createElementNS(NS, 'line'); const a = n[e.source], b = n[e.target];
  l.setAttribute('x1', a.x); l.setAttribute('y1', a.y); l.setAttribute('x2', b.x); l.setAttribute('y2', b.y); l.setAttribute('class', e.relation);
  svg.appendChild(l);
}}
const list = document.getElementById('nodes');
for (const p of n) {{
  const g = document.createElementNS(NS, 'g'); g.setAttribute('class', 'node'); g.setAttribute('data-name', p.name);
  const c = document.createElementNS(NS, 'circle'); c.setAttribute('cx', p.x); c.setAttribute('cy', p.y); c.setAttribute('r', p.root ? 9 : 6); c.setAttribute('fill', color(p.kind));
  const t = document.createElementNS(NS, 'text'); t.setAttribute('x', p.x + 10); t.setAttribute('y', p.y + 3); t.textContent = p.name;
  const tip = document.createElementNS(NS, 'title'); tip.textContent = p.kind + ' ' + p.name + (p.path ? ' — ' + p.path + ':' + p.line : '');
  g.appendChild(c); g.appendChild(t); g.appendChild(tip); svg.appendChild(g);
  const li = document.createElement('li'); li.textContent = p.kind + ' ' + p.name + (p.test ? ' (test)' : ''); if (p.root) li.className = 'root';
  li.dataset.name = p.name; list.appendChild(li);
}}
document.title = {title_js} + ' — ' + n.length + ' nodes';
</script></body></html>
"##,
        title = escape(title),
        data = data,
        title_js = serde_json::to_string(title).unwrap_or_default().replace("</", "<\\/")
    )
}
