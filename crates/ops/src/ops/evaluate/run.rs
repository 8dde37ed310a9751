//! Running an evaluation: every question asked at its revision, metrics at file level (and
//! symbol level where symbols are expected), latency, output size, indexing time measured
//! apart, the identity of what was measured, comparisons with a baseline and gates.

use super::dataset::Question;
use super::metrics::{self, Scores};
use crate::engine::Engine;
use crate::ops::search::hit;
use crate::search::filter::Filters;
use crate::search::{Mode, bm25::FileBm25};
use crate::view::View;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// What is being evaluated: one of the retrieval modes, or the whole-file BM25 baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvalMode {
    Hybrid,
    Dense,
    Sparse,
    Bm25Files,
}

impl EvalMode {
    pub fn parse(s: &str) -> Result<EvalMode> {
        Ok(match s {
            "bm25-files" | "files" => EvalMode::Bm25Files,
            other => match Mode::parse(other)? {
                Mode::Hybrid => EvalMode::Hybrid,
                Mode::Dense => EvalMode::Dense,
                Mode::Sparse => EvalMode::Sparse,
            },
        })
    }

    /// The name as written on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            EvalMode::Hybrid => "hybrid",
            EvalMode::Dense => "dense",
            EvalMode::Sparse => "sparse",
            EvalMode::Bm25Files => "bm25-files",
        }
    }

    fn search_mode(self) -> Option<Mode> {
        match self {
            EvalMode::Hybrid => Some(Mode::Hybrid),
            EvalMode::Dense => Some(Mode::Dense),
            EvalMode::Sparse => Some(Mode::Sparse),
            EvalMode::Bm25Files => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerQuestion {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    pub query: String,
    pub rev: Option<String>,
    pub expected: Vec<String>,
    pub ranked_files: Vec<String>,
    pub scores: Scores,
    /// The files of the top chunks as a result list shows them (what an agent reading the
    /// first hits sees): Hit@5 and MRR over the files of the top 5 chunks, Recall@10 over the
    /// files of the top 10.
    #[serde(default)]
    pub chunk_scores: ChunkScores,
    pub latency_ms: f64,
    pub tokens: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Identity {
    pub version: String,
    pub fingerprints: BTreeMap<String, String>,
    pub model: Option<String>,
    pub mode: EvalMode,
    pub k: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reranker: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gate {
    pub gate: String,
    pub value: f64,
    pub threshold: f64,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub identity: Identity,
    pub questions: usize,
    pub metrics: Scores,
    #[serde(default)]
    pub chunk_metrics: ChunkScores,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub symbol_metrics: Option<Scores>,
    /// Metrics per question kind and per split, when the questions say.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, Scores>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_split: BTreeMap<String, Scores>,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    pub tokens_mean: f64,
    pub index_seconds: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Scores>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<Gate>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_question: Vec<PerQuestion>,
}

/// File-level scores of the chunk list itself (no file ranking applied).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct ChunkScores {
    pub hit_5: f64,
    pub mrr_5: f64,
    pub recall_10: f64,
}

impl ChunkScores {
    fn of(chunk_paths: &[String], expected: &[String]) -> ChunkScores {
        let top = |n: usize| dedup_files(chunk_paths.iter().take(n).cloned());
        let five = metrics::score(&top(5), expected);
        let ten = metrics::score(&top(10), expected);
        ChunkScores { hit_5: five.hit_10, mrr_5: five.mrr, recall_10: ten.recall_10 }
    }

    fn mean(all: &[ChunkScores]) -> ChunkScores {
        let n = all.len().max(1) as f64;
        ChunkScores {
            hit_5: all.iter().map(|s| s.hit_5).sum::<f64>() / n,
            mrr_5: all.iter().map(|s| s.mrr_5).sum::<f64>() / n,
            recall_10: all.iter().map(|s| s.recall_10).sum::<f64>() / n,
        }
    }
}

pub struct RunOptions {
    pub mode: EvalMode,
    pub k: usize,
    pub per_question: bool,
    pub baseline: Option<Report>,
    pub min_recall: Option<f64>,
    pub max_recall_drop: Option<f64>,
    pub max_p95_ms: Option<f64>,
    /// Rerank each question's candidates with this cross-encoder.
    pub rerank: Option<String>,
    /// Write each question's candidates with their scores here (JSON lines).
    pub candidates: Option<std::path::PathBuf>,
}

/// One question's candidates as the ranking saw them, for trying ranking changes offline.
#[derive(Serialize)]
struct CandidateLine<'a> {
    id: &'a str,
    query: &'a str,
    split: Option<&'a str>,
    expected: &'a [String],
    mode: &'static str,
    candidates: Vec<Candidate<'a>>,
}

#[derive(Serialize)]
struct Candidate<'a> {
    path: &'a str,
    file: u32,
    start_line: u32,
    end_line: u32,
    symbol: &'a str,
    kind: &'a str,
    code: bool,
    bm25: Option<f32>,
    sparse_rank: Option<usize>,
    cosine: Option<f32>,
    dense_rank: Option<usize>,
    fused: f32,
    boost: f32,
    priors: Vec<(&'static str, f32)>,
    decay: f32,
    score: f32,
    /// Chunks of its file in the view.
    file_chunks: u32,
    /// Other files of the view holding a byte-identical chunk (path, their chunk count).
    copies: Vec<(&'a str, u32)>,
}

/// Exit code when a gate fails.
pub use crate::error::EXIT_GATE_FAILED;

fn dedup_files(paths: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    paths.filter(|p| seen.insert(p.clone())).collect()
}

pub fn run(engine: &Engine, questions: &[Question], o: &RunOptions) -> Result<Report> {
    let mut per = Vec::with_capacity(questions.len());
    let mut symbol_scores = Vec::new();
    let mut index_seconds = 0.0;
    let mut notes: Vec<String> = Vec::new();
    // Group by revision so each view is opened once.
    let mut order: Vec<usize> = (0..questions.len()).collect();
    order.sort_by(|&a, &b| questions[a].rev.cmp(&questions[b].rev).then(a.cmp(&b)));
    let mut file_index: HashMap<String, (std::sync::Arc<crate::view::ViewData>, FileBm25)> = HashMap::new();
    let progress = &engine.progress;
    let candidates_out = o.candidates.as_ref().map(|p| -> Result<_> {
        let f = std::fs::File::create(p)
            .map_err(|e| super::EvalError::Candidates { path: p.display().to_string(), why: e.to_string() })?;
        Ok(std::io::BufWriter::new(f))
    });
    let mut candidates_out = candidates_out.transpose()?;
    // Per view: the ordinals of each chunk content that occurs more than once.
    let mut shared: HashMap<String, HashMap<[u8; 16], Vec<u32>>> = HashMap::new();
    progress.start("evaluating", questions.len() as u64);
    for &qi in &order {
        let q = &questions[qi];
        let t = Instant::now();
        let view = View::open(&engine.ws, &engine.spec(q.rev.as_deref()))?;
        let data = engine.open_listed(&view)?.data;
        if o.mode.search_mode().is_some_and(|m| m != Mode::Sparse) {
            // Vectors for the whole revision first (indexing, measured apart), as `index` would.
            if let Ok(model) = engine.embedder() {
                crate::index::embed::embed_view(&engine.ws.store, &view, model.as_ref(), &engine.progress)?;
            }
            if let Err(reason) = engine.dense_for(&view, &data).map_err(|e| e.to_string())
                && !notes.contains(&reason)
            {
                notes.push(reason);
            }
        }
        index_seconds += t.elapsed().as_secs_f64();
        let filters = q
            .filters
            .as_ref()
            .map(|f| Filters {
                globs: f.glob.iter().cloned().collect(),
                extensions: f.extensions.clone(),
                path_contains: f.path_contains.clone(),
                pathspecs: Vec::new(),
                languages: Vec::new(),
            })
            .unwrap_or_default();
        let mut t = Instant::now();
        let chunk_paths: Vec<String>;
        let (ranked_files, ranked_symbols, text) = match o.mode.search_mode() {
            Some(mode) => {
                let allowed = filters.allowed(&data.table)?;
                let pool = (o.k * 5).max(engine.ws.config.search.pool);
                let searcher = engine.searcher(&view, &data, mode)?;
                let r = searcher.retrieve(&q.query, mode, pool, allowed.as_deref())?;
                if let Some(out) = candidates_out.as_mut() {
                    let priors = searcher.priors(&q.query, r.mode);
                    let copies = shared.entry(data.key.clone()).or_insert_with(|| {
                        let mut m: HashMap<[u8; 16], Vec<u32>> = HashMap::new();
                        for ord in data.table.live() {
                            m.entry(data.table.chunk_hash(ord)).or_default().push(ord);
                        }
                        m.retain(|_, v| v.len() > 1);
                        m
                    });
                    let line = CandidateLine {
                        id: &q.id,
                        query: &q.query,
                        split: q.split.as_deref(),
                        expected: &q.expected.files,
                        mode: r.mode.name(),
                        candidates: r
                            .ranked
                            .iter()
                            .map(|x| {
                                let c = data.table.chunk(x.ord);
                                Candidate {
                                    path: c.path,
                                    file: data.table.chunk_file(x.ord),
                                    start_line: c.start_line,
                                    end_line: c.end_line,
                                    symbol: c.symbol,
                                    kind: c.kind,
                                    code: crate::lang::is_code_file(c.lang, c.path),
                                    bm25: x.sparse_score,
                                    sparse_rank: x.sparse_rank,
                                    cosine: x.dense_score,
                                    dense_rank: x.dense_rank,
                                    fused: x.fused,
                                    boost: x.boost,
                                    priors: priors.explain(&data, x.ord),
                                    decay: x.decay,
                                    score: x.score,
                                    file_chunks: data.table.file_chunk_count(data.table.chunk_file(x.ord)),
                                    copies: copies
                                        .get(&data.table.chunk_hash(x.ord))
                                        .into_iter()
                                        .flatten()
                                        .map(|&o| data.table.chunk_file(o))
                                        .filter(|&f| f != data.table.chunk_file(x.ord))
                                        .map(|f| (data.table.file_path(f), data.table.file_chunk_count(f)))
                                        .collect(),
                                }
                            })
                            .collect(),
                    };
                    use std::io::Write;
                    serde_json::to_writer(&mut *out, &line)?;
                    out.write_all(b"\n")?;
                }
                let mut hits: Vec<_> = r.ranked.iter().take(o.k * 5).map(|x| hit(&data, x)).collect::<Result<_>>()?;
                if let Some(name) = &o.rerank {
                    let ce = engine.reranker(name).map_err(|reason| super::EvalError::NoReranker { reason })?;
                    hits = crate::ops::search::rerank(&ce, &q.query, hits)?;
                }
                // Files in the order of their best chunk: `search --files`' own ranking.
                let files = match &o.rerank {
                    Some(_) => dedup_files(hits.iter().map(|h| h.path.clone())),
                    None => {
                        crate::search::rank::rank_files(&data, &r.ranked[..r.ranked.len().min(o.k * 5)], usize::MAX)
                            .into_iter()
                            .map(|f| f.path)
                            .collect()
                    }
                };
                let symbols = dedup_files(hits.iter().map(|h| h.symbol.clone()));
                chunk_paths = hits.iter().take(10).map(|h| h.path.clone()).collect();
                let shown = crate::ops::search::SearchResult {
                    query: q.query.clone(),
                    mode: r.mode,
                    note: None,
                    filters: Filters::default(),
                    results: hits.into_iter().take(o.k).collect(),
                    files: Vec::new(),
                    next_cursor: None,
                    suggestions: Vec::new(),
                    score_scale: None,
                    best_cosine: None,
                    source: None,
                };
                let text = crate::ops::search::render(&data.id, &shown, crate::ops::search::SNIPPET_LINES);
                (files, symbols, text)
            }
            None => {
                let key = data.key.clone();
                if !file_index.contains_key(&key) {
                    let t0 = Instant::now();
                    let mut texts: Vec<(u32, String)> =
                        (0..data.table.file_count() as u32).map(|f| (f, String::new())).collect();
                    for ord in data.table.live() {
                        let c = data.table.chunk(ord);
                        let s = &mut texts[c.file as usize].1;
                        s.push_str(c.text()?);
                        s.push('\n');
                    }
                    file_index.insert(key.clone(), (data.clone(), FileBm25::build(&texts)));
                    index_seconds += t0.elapsed().as_secs_f64();
                    // Building the baseline's index is indexing, not query time.
                    t = Instant::now();
                }
                let (d, idx) = &file_index[&key];
                let hits = idx.search(&crate::analyze::query_terms(&q.query), o.k * 5);
                let files: Vec<String> = hits.iter().map(|(f, _)| d.table.file_path(*f).to_string()).collect();
                let text = files.iter().take(o.k).cloned().collect::<Vec<_>>().join("\n");
                chunk_paths = files.iter().take(10).cloned().collect();
                (files, Vec::new(), text)
            }
        };
        let latency_ms = t.elapsed().as_secs_f64() * 1000.0;
        let scores = metrics::score(&ranked_files, &q.expected.files);
        if !q.expected.symbols.is_empty() {
            symbol_scores.push(metrics::score(&ranked_symbols, &q.expected.symbols));
        }
        per.push((
            qi,
            PerQuestion {
                id: q.id.clone(),
                kind: q.kind.clone(),
                split: q.split.clone(),
                query: q.query.clone(),
                rev: q.rev.clone(),
                expected: q.expected.files.clone(),
                ranked_files: ranked_files.into_iter().take(o.k).collect(),
                scores,
                chunk_scores: ChunkScores::of(&chunk_paths, &q.expected.files),
                latency_ms,
                tokens: text.len().div_ceil(4),
            },
        ));
        progress.inc(1);
    }
    progress.finish();
    if let Some(mut out) = candidates_out {
        use std::io::Write;
        out.flush()?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    per.sort_by_key(|(i, _)| *i);
    let per: Vec<PerQuestion> = per.into_iter().map(|(_, p)| p).collect();
    let all: Vec<Scores> = per.iter().map(|p| p.scores).collect();
    let mut lat: Vec<f64> = per.iter().map(|p| p.latency_ms).collect();
    lat.sort_by(|a, b| a.total_cmp(b));
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert("chunks".into(), crate::layer::chunks_fingerprint());
    fingerprints.insert("lexical".into(), crate::layer::lexical_fingerprint());
    fingerprints.insert("graph".into(), crate::layer::graph_fingerprint());
    let model = match engine.embedder() {
        Ok(m) => {
            fingerprints.insert("vectors".into(), m.fingerprint().to_string());
            Some(m.name().to_string())
        }
        Err(_) => None,
    };
    let metrics = metrics::mean(&all);
    let group = |f: &dyn Fn(&PerQuestion) -> Option<String>| -> BTreeMap<String, Scores> {
        let mut m: BTreeMap<String, Vec<Scores>> = BTreeMap::new();
        for p in &per {
            if let Some(k) = f(p) {
                m.entry(k).or_default().push(p.scores);
            }
        }
        m.into_iter().map(|(k, v)| (k, metrics::mean(&v))).collect()
    };
    let by_kind = group(&|p| p.kind.clone());
    let by_split = group(&|p| p.split.clone());
    let mut report = Report {
        identity: Identity {
            version: env!("CARGO_PKG_VERSION").into(),
            fingerprints,
            model,
            mode: o.mode,
            k: o.k,
            reranker: o.rerank.clone(),
        },
        questions: per.len(),
        metrics,
        chunk_metrics: ChunkScores::mean(&per.iter().map(|p| p.chunk_scores).collect::<Vec<_>>()),
        symbol_metrics: (!symbol_scores.is_empty()).then(|| metrics::mean(&symbol_scores)),
        by_kind,
        by_split,
        latency_ms_p50: metrics::percentile(&lat, 0.5),
        latency_ms_p95: metrics::percentile(&lat, 0.95),
        tokens_mean: per.iter().map(|p| p.tokens as f64).sum::<f64>() / per.len().max(1) as f64,
        index_seconds,
        notes,
        baseline: o.baseline.as_ref().map(|b| b.metrics),
        gates: Vec::new(),
        per_question: if o.per_question { per } else { Vec::new() },
    };
    if let Some(t) = o.min_recall {
        report.gates.push(Gate {
            gate: "min_recall@10".into(),
            value: metrics.recall_10,
            threshold: t,
            passed: metrics.recall_10 >= t,
        });
    }
    if let (Some(t), Some(b)) = (o.max_recall_drop, &o.baseline) {
        let drop = b.metrics.recall_10 - metrics.recall_10;
        report.gates.push(Gate { gate: "max_recall@10_drop".into(), value: drop, threshold: t, passed: drop <= t });
    }
    if let Some(t) = o.max_p95_ms {
        report.gates.push(Gate {
            gate: "max_p95_ms".into(),
            value: report.latency_ms_p95,
            threshold: t,
            passed: report.latency_ms_p95 <= t,
        });
    }
    Ok(report)
}

pub fn render(r: &Report) -> String {
    let m = &r.metrics;
    let mut out = format!(
        "{} questions · mode {} · k {} · model {}\n",
        r.questions,
        r.identity.mode.name(),
        r.identity.k,
        r.identity.model.as_deref().unwrap_or("none")
    );
    out.push_str(&format!(
        "file level: Recall@1 {:.3}  Recall@5 {:.3}  Recall@10 {:.3}  Hit@10 {:.3}  MRR {:.3}  NDCG@10 {:.3}\n",
        m.recall_1, m.recall_5, m.recall_10, m.hit_10, m.mrr, m.ndcg_10
    ));
    if let Some(s) = &r.symbol_metrics {
        out.push_str(&format!("symbol level: Recall@10 {:.3}  MRR {:.3}\n", s.recall_10, s.mrr));
    }
    for (name, groups) in [("kind", &r.by_kind), ("split", &r.by_split)] {
        for (k, s) in groups {
            out.push_str(&format!(
                "  {name} {k}: Recall@5 {:.3}  Recall@10 {:.3}  MRR {:.3}  NDCG@10 {:.3}\n",
                s.recall_5, s.recall_10, s.mrr, s.ndcg_10
            ));
        }
    }
    if let Some(b) = &r.baseline {
        out.push_str(&format!(
            "baseline:   Recall@10 {:.3} ({:+.3})  MRR {:.3} ({:+.3})\n",
            b.recall_10,
            m.recall_10 - b.recall_10,
            b.mrr,
            m.mrr - b.mrr
        ));
    }
    out.push_str(&format!(
        "query latency p50 {:.1} ms, p95 {:.1} ms · ~{:.0} output tokens per answer · indexing {:.1} s (measured apart)\n",
        r.latency_ms_p50, r.latency_ms_p95, r.tokens_mean, r.index_seconds
    ));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for g in &r.gates {
        out.push_str(&format!(
            "gate {}: {:.3} vs {:.3} — {}\n",
            g.gate,
            g.value,
            g.threshold,
            if g.passed { "passed" } else { "FAILED" }
        ));
    }
    for p in &r.per_question {
        out.push_str(&format!(
            "  [{}] {:.2} MRR  {}  → {}\n",
            p.id,
            p.scores.mrr,
            p.query.lines().next().unwrap_or(""),
            p.ranked_files.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

results!(Report => "per_question");
