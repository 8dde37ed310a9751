//! `find_similar`: code that looks like a snippet or like a file's chunks, by embedding
//! (byte-identical chunks and the source itself removed); BM25 when dense is off.

use super::args::{Count, FilterArgs, Rev};
use super::search::{Hit, hit, render};
use super::{Answer, search::SearchResult};
use crate::engine::Engine;
use crate::search::{self, Mode, Ranked};

use anyhow::Result;
use std::collections::HashSet;

crate::error::errors! {
    /// Code to compare with that is not there.
    pub enum SimilarError: Usage {
        NoChunk { file: String, at: String } => "no indexed chunk of `{file}`{at} in this view",
        NothingGiven {} => "find_similar needs a code snippet or --file",
    }
}

/// `find_similar`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct SimilarArgs {
    /// A code snippet (or use --file).
    #[serde(rename = "code")]
    #[schemars(description = "")]
    pub snippet: Option<String>,
    /// Find code similar to this file's chunks.
    #[arg(long)]
    #[schemars(description = "")]
    pub file: Option<String>,
    /// With --file: only the chunk at this line.
    #[arg(long)]
    #[schemars(description = "")]
    pub line: Option<u32>,
    /// Number of results [default: 10].
    #[arg(short = 'k', long = "limit")]
    #[serde(rename = "n_results")]
    #[schemars(description = "")]
    pub k: Option<Count>,
    #[command(flatten)]
    #[serde(skip_deserializing)]
    #[schemars(skip)]
    pub lines: super::args::Lines,
    #[command(flatten)]
    #[serde(flatten)]
    pub at: Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub filters: FilterArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::Sources,
}

pub fn run(engine: &Engine, a: &SimilarArgs) -> Result<Answer> {
    let view = engine.view(&engine.spec(a.at.rev.as_deref()))?;
    let data = engine.open_listed(&view)?.data;
    let t = &data.table;
    // The source: chunks of a file (or the one at a line), or a snippet.
    let (source_ords, text): (Vec<u32>, String) = match (&a.file, &a.snippet) {
        (Some(f), _) => {
            let f = f.trim_start_matches("./");
            let ords: Vec<u32> = data
                .file_chunks(f)
                .filter(|&o| {
                    let c = t.chunk(o);
                    a.line.is_none_or(|l| c.start_line <= l && l <= c.end_line)
                })
                .collect();
            if ords.is_empty() {
                let at = a.line.map(|l| format!(" at line {l}")).unwrap_or_default();
                return Err(SimilarError::NoChunk { file: f.to_string(), at }.into());
            }
            let text = ords.iter().map(|&o| t.chunk(o).text()).collect::<Result<Vec<_>, _>>()?.join("\n");
            (ords, text)
        }
        (None, Some(s)) if !s.trim().is_empty() => (Vec::new(), s.clone()),
        _ => return Err(SimilarError::NothingGiven {}.into()),
    };
    let exclude: HashSet<[u8; 16]> = source_ords.iter().map(|&o| t.chunk_hash(o)).collect();
    let exclude_ords: HashSet<u32> = source_ords.iter().copied().collect();
    let filters = a.filters.filters()?;
    let allowed = filters.allowed(t)?;
    let (k, clamped) = crate::search::clamp_k(a.k.map_or(10, |c| c.0));
    let pool = (k + exclude_ords.len()) * 3 + 10;
    let mut notes: Vec<String> = clamped.into_iter().collect();
    let (mode, ranked): (Mode, Vec<Ranked>) = match engine.dense_for(&view, &data) {
        Ok(m) => {
            let model = engine.embedder()?;
            // A file's chunks: the mean of their stored vectors; a snippet: embed it.
            let q: Vec<f32> = if !source_ords.is_empty() && source_ords.iter().all(|&o| m.has(o)) {
                let mut v = vec![0f32; m.dim];
                for &o in &source_ords {
                    for (x, y) in v.iter_mut().zip(m.row(o)) {
                        *x += y;
                    }
                }
                crate::embed::normalize(&mut v);
                v
            } else {
                model.embed_documents(&[text.as_str()])?
            };
            (
                Mode::Dense,
                m.search(&q, pool, allowed.as_deref())
                    .into_iter()
                    .enumerate()
                    .map(|(i, (o, s))| Ranked::dense(i, o, s))
                    .collect(),
            )
        }
        Err(reason) => {
            notes.push(format!("results are lexical only: {reason}"));
            let hits = search::sparse(&data, &text, pool, allowed.as_deref(), None)?;
            (Mode::Sparse, hits.into_iter().enumerate().map(|(i, (o, s))| Ranked::sparse(i, o, s)).collect())
        }
    };
    let ranked: Vec<Ranked> = search::dedup_identical(&data, ranked)
        .into_iter()
        .filter(|r| !exclude_ords.contains(&r.ord) && !exclude.contains(&t.chunk_hash(r.ord)))
        .take(k)
        .collect();
    let results: Vec<Hit> = ranked.iter().map(|r| hit(&data, r)).collect::<Result<_>>()?;
    let query = match &a.file {
        Some(f) => format!("similar to {f}{}", a.line.map(|l| format!(":{l}")).unwrap_or_default()),
        None => "similar to snippet".into(),
    };
    let r = SearchResult {
        query,
        mode,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        filters,
        results,
        files: Vec::new(),
        next_cursor: None,
        suggestions: Vec::new(),
        score_scale: None,
        best_cosine: None,
        source: None,
    };
    let text = render(&data.id, &r, a.lines.per_hit);
    Ok(Answer::new("find_similar", Some(data.id.clone()), &r, text))
}
