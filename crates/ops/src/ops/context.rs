//! `context SYMBOL --budget TOKENS`: a symbol's code with the lines around it and its direct
//! neighbours (its type's head, bases, callees, callers), packed into a token budget for an
//! agent's context window. The most useful piece first; a neighbour that does not fit is
//! listed as omitted, never cut; only the definition itself is shortened (from the bottom)
//! when it alone exceeds the budget.
//!
//! Token estimate: `ceil(characters / 4)` of each slice's text (its header line included),
//! the usual rule of thumb for code with BPE tokenisers; `used` is the sum over slices and
//! never exceeds the budget.

use super::nav::{Ctx, open};
use super::{Answer, view_line};
use crate::engine::Engine;
use crate::graph::model::{Confidence, Node, Rel};
use crate::graph::query;
use anyhow::Result;
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use serde::Serialize;

crate::error::errors! {
    /// A context slice that cannot be cut as asked.
    pub enum ContextError: Usage {
        Budget { budget: usize, name: String, least: usize } =>
            "--budget {budget} is too small for even the first line of {name} ({least} tokens); give at least {least}",
    }
}

/// Estimated tokens of `text` (see the module documentation).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// `context`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ContextArgs {
    /// Symbol: qualified (`Class.method`) or leaf name.
    #[schemars(description = "")]
    pub symbol: String,
    /// Tokens at most, estimated as ceil(characters / 4) of each slice [default: 2000].
    #[arg(long, value_name = "TOKENS")]
    #[schemars(description = "tokens, default 2000 (ceil(chars/4))")]
    pub budget: Option<super::args::Count>,
    /// Lines shown before and after the definition [default: 3].
    #[arg(long, value_name = "LINES")]
    #[serde(default, deserialize_with = "super::args::number")]
    #[schemars(with = "Option<u32>", description = "lines around the definition, default 3")]
    pub around: Option<u32>,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: super::args::Rev,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Slice {
    /// definition, type, base, callee, caller.
    pub role: &'static str,
    pub name: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<&'static str>,
    /// Cut to fit (the definition only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    pub tokens: usize,
    /// Header line and code, as rendered.
    pub text: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Omitted {
    pub role: &'static str,
    pub name: String,
    pub path: String,
    pub line: u32,
    pub tokens: usize,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ContextSlice {
    pub symbol: String,
    pub matched: bool,
    pub budget: usize,
    pub used: usize,
    pub estimate: &'static str,
    pub slices: Vec<Slice>,
    /// Neighbours that did not fit, best first.
    pub omitted: Vec<Omitted>,
    /// With `matched` false: names of the view near the one asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
}

const ESTIMATE: &str = "ceil(characters / 4) per slice, header included";

/// The lines of a file of the view (decoded as indexing decodes them).
fn file_lines(engine: &Engine, ctx: &Ctx, path: &str) -> Option<Vec<String>> {
    let f = ctx.view.files.iter().find(|f| f.path == path)?;
    let bytes = match &f.content {
        Some(c) => c.as_ref().clone(),
        None => crate::repo::Repo::read_blob(&engine.ws.repo.local(), f.blob).ok()?,
    };
    Some(crate::encoding::text(&bytes).lines().map(str::to_string).collect())
}

struct Candidate {
    role: &'static str,
    name: String,
    path: String,
    start: u32,
    end: u32,
    confidence: Option<&'static str>,
}

fn header(c: &Candidate) -> String {
    let conf = c.confidence.map(|x| format!(", {x}")).unwrap_or_default();
    format!("--- {}:{}-{} {} {}{conf}\n", crate::present::quote_path(&c.path), c.start, c.end, c.role, c.name)
}

pub fn run(engine: &Engine, a: &ContextArgs) -> Result<Answer> {
    super::args::required(&a.symbol, "symbol")?;
    let budget = super::args::Count::or(a.budget, 2000, 1_000_000);
    let around = a.around.unwrap_or(3).min(1000);
    let ctx = open(engine, a.at.rev.as_deref())?;
    let (defs, _) = query::match_symbol(&ctx.graph, &a.symbol);
    let Some(&d) = defs.first() else {
        let suggestions = query::suggest(&ctx.graph, &a.symbol, 5);
        let text = format!(
            "{}\nno symbol named \"{}\" in this view{}\n",
            view_line(&ctx.data.id),
            a.symbol,
            crate::present::did_you_mean(&suggestions)
        );
        let r = ContextSlice {
            symbol: a.symbol.clone(),
            matched: false,
            budget,
            used: 0,
            estimate: ESTIMATE,
            slices: vec![],
            omitted: vec![],
            suggestions,
        };
        return Ok(Answer::new("context", Some(ctx.data.id.clone()), &r, text));
    };
    let g = &ctx.graph;
    let mut cache: std::collections::HashMap<String, Option<Vec<String>>> = Default::default();
    let mut lines_of = |path: &str| -> Option<Vec<String>> {
        cache.entry(path.to_string()).or_insert_with(|| file_lines(engine, &ctx, path)).clone()
    };

    // The definition with the lines around it.
    let def = &g.defs[d as usize];
    let path = g.def_path(d).to_string();
    let lines = lines_of(&path).unwrap_or_default();
    let n = lines.len() as u32;
    let start = def.start_line.saturating_sub(around).max(1);
    let end = (def.end_line + around).min(n.max(def.end_line));
    let main =
        Candidate { role: "definition", name: def.qualified.clone(), path: path.clone(), start, end, confidence: None };
    let mut slices = Vec::new();
    let mut used = 0usize;
    let body = |from: u32, to: u32, lines: &[String]| -> String {
        let mut s = String::new();
        for l in lines.iter().skip(from as usize - 1).take((to + 1).saturating_sub(from) as usize) {
            s.push_str(l);
            s.push('\n');
        }
        s
    };
    let mut to = end;
    let mut truncated = false;
    loop {
        let c = Candidate {
            role: main.role,
            name: main.name.clone(),
            path: main.path.clone(),
            start,
            end: to,
            confidence: None,
        };
        let text = format!("{}{}", header(&c), body(start, to, &lines));
        let t = estimate_tokens(&text);
        if t <= budget {
            used += t;
            slices.push(Slice {
                role: c.role,
                name: c.name,
                path: c.path,
                start_line: start,
                end_line: to,
                confidence: None,
                truncated,
                tokens: t,
                text,
            });
            break;
        }
        if to <= start {
            return Err(ContextError::Budget { budget, name: main.name.clone(), least: t }.into());
        }
        // Cut a line at a time from the bottom; big cuts first when far over.
        let over_lines = ((t - budget) / 10).max(1) as u32;
        to = to.saturating_sub(over_lines).max(start);
        truncated = true;
    }

    // Neighbours, most telling first: the enclosing type's head, bases, callees, callers.
    let mut cands: Vec<Candidate> = Vec::new();
    let head_of = |x: u32| -> (u32, u32) {
        let dd = &g.defs[x as usize];
        // A type's head: its first lines up to its first member.
        let first_child = g.defs.iter().filter(|c| c.parent == Some(x)).map(|c| c.start_line).min();
        let stop = first_child.map(|l| l.saturating_sub(1)).unwrap_or(dd.end_line).max(dd.start_line);
        (dd.start_line, stop.min(dd.start_line + 5))
    };
    if let Some(p) = def.parent {
        let (s, e) = head_of(p);
        cands.push(Candidate {
            role: "type",
            name: g.defs[p as usize].qualified.clone(),
            path: g.def_path(p).to_string(),
            start: s,
            end: e,
            confidence: None,
        });
    }
    let confident = |c: Confidence| c.is_confident();
    let mut links: Vec<(&'static str, u32, Confidence, u32)> = Vec::new();
    let me = g.node_of(Node::Def(d));
    for e in g.g.edges_directed(me, Direction::Outgoing) {
        if let Node::Def(t) = g.g[e.target()] {
            if e.weight().rel.is_inherits() {
                links.push(("base", t, e.weight().confidence, 0));
            } else if e.weight().rel == Rel::Calls {
                links.push(("callee", t, e.weight().confidence, 0));
            }
        }
    }
    for e in g.g.edges_directed(me, Direction::Incoming) {
        if e.weight().rel == Rel::Calls
            && let Node::Def(s) = g.g[e.source()]
        {
            links.push(("caller", s, e.weight().confidence, e.weight().line));
        }
    }
    let order = |r: &str| match r {
        "base" => 0,
        "callee" => 1,
        _ => 2,
    };
    // Confident edges first, then by role, then by location (stable answers).
    links.sort_by_key(|(r, x, c, line)| {
        (!confident(*c), order(r), g.def_path(*x).to_string(), g.defs[*x as usize].start_line, *line)
    });
    links.dedup_by_key(|(r, x, _, line)| (*r, *x, *line));
    for (role, x, conf, line) in links {
        if x == d {
            continue;
        }
        let xd = &g.defs[x as usize];
        let (s, e) = match role {
            // The call site inside the caller: its first line and the line of the call.
            "caller" if line > xd.start_line => (line.saturating_sub(1).max(xd.start_line), line.min(xd.end_line)),
            "base" => head_of(x),
            // A callee's signature: its first lines.
            _ => (xd.start_line, xd.end_line.min(xd.start_line + 2)),
        };
        cands.push(Candidate {
            role,
            name: xd.qualified.clone(),
            path: g.def_path(x).to_string(),
            start: s,
            end: e,
            confidence: Some(conf.name()),
        });
    }
    let mut omitted = Vec::new();
    for c in cands {
        let Some(lines) = lines_of(&c.path) else { continue };
        let text = format!("{}{}", header(&c), body(c.start, c.end.min(lines.len() as u32).max(c.start), &lines));
        let t = estimate_tokens(&text);
        if used + t <= budget {
            used += t;
            slices.push(Slice {
                role: c.role,
                name: c.name,
                path: c.path,
                start_line: c.start,
                end_line: c.end,
                confidence: c.confidence,
                truncated: false,
                tokens: t,
                text,
            });
        } else {
            omitted.push(Omitted { role: c.role, name: c.name, path: c.path, line: c.start, tokens: t });
        }
    }
    let mut text =
        format!("{}\ncontext for {}: {used} of {} tokens ({ESTIMATE})\n", view_line(&ctx.data.id), a.symbol, budget);
    for s in &slices {
        text.push_str(&s.text);
    }
    if !omitted.is_empty() {
        text.push_str(&format!("omitted for the budget ({}):\n", omitted.len()));
        for o in omitted.iter().take(20) {
            text.push_str(&format!(
                "  {} {} {} ({} tokens)\n",
                crate::present::loc(&o.path, o.line),
                o.role,
                o.name,
                o.tokens
            ));
        }
    }
    let r = ContextSlice {
        symbol: a.symbol.clone(),
        matched: true,
        budget,
        used,
        estimate: ESTIMATE,
        slices,
        omitted,
        suggestions: Vec::new(),
    };
    Ok(Answer::new("context", Some(ctx.data.id.clone()), &r, text))
}

results!(ContextSlice => "slices");
