//! A view's BM25 index (tantivy), built from the lexical layer's pre-analysed terms: one
//! document per chunk with three separately weighted fields (chunk text, symbol, path), and
//! the chunk's ordinal in the view as a fast field.

use anyhow::{Context, Result};
use std::path::Path;
use std::sync::Arc;
use tantivy::collector::{Collector, SegmentCollector, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{PreTokenizedString, Token, TokenStream, Tokenizer};
use tantivy::{BitSet, DocId, Index, IndexReader, ReloadPolicy, Score, SegmentOrdinal, SegmentReader, TantivyDocument, Term};

const TOKENIZER: &str = "lynx_code";

/// Field weights. The symbol and path fields are short, so BM25's length normalisation already
/// makes a match there count for more than one in the body; heavier boosts measured worse on
/// natural-language questions (docs/EVALUATION.md).
pub const CONTENT_BOOST: f32 = 1.0;
pub const SYMBOL_BOOST: f32 = 1.0;
pub const PATH_BOOST: f32 = 1.25;

struct Fields {
    content: Field,
    symbol: Field,
    path: Field,
    ord: Field,
}

fn schema() -> (Schema, Fields) {
    let mut sb = Schema::builder();
    let idx = TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs);
    let opts = TextOptions::default().set_indexing_options(idx);
    let content = sb.add_text_field("content", opts.clone());
    let symbol = sb.add_text_field("symbol", opts.clone());
    let path = sb.add_text_field("path", opts);
    // Indexed too, so a derived view can delete the documents of chunks that left it.
    let ord = sb.add_u64_field("ord", NumericOptions::default().set_fast().set_indexed());
    (sb.build(), Fields { content, symbol, path, ord })
}

fn pre_tokenized<'a>(terms: impl Iterator<Item = (&'a str, u32)>) -> PreTokenizedString {
    let mut tokens = Vec::new();
    let mut pos = 0usize;
    for (t, n) in terms {
        for _ in 0..n {
            tokens.push(Token { offset_from: 0, offset_to: 0, position: pos, text: t.to_string(), position_length: 1 });
            pos += 1;
        }
    }
    PreTokenizedString { text: String::new(), tokens }
}

enum Writer {
    /// A fresh single-segment index (document ids follow insertion order).
    Fresh(tantivy::indexer::SingleSegmentIndexWriter<TantivyDocument>),
    /// A previous view's index, extended (and with deletions).
    Derived(tantivy::IndexWriter),
}

/// Writes a view's BM25 index.
pub struct Bm25Writer {
    writer: Writer,
    fields: Fields,
}

impl Bm25Writer {
    /// Starts an index in `dir` (which must exist and be empty).
    pub fn create(dir: &Path) -> Result<Bm25Writer> {
        let (schema, fields) = schema();
        let tm = tantivy::tokenizer::TokenizerManager::default();
        tm.register(TOKENIZER, CodeTokenizer);
        let mmap = tantivy::directory::MmapDirectory::open(dir).context("opening BM25 index directory")?;
        let writer = tantivy::IndexBuilder::new()
            .schema(schema)
            .tokenizers(tm)
            .single_segment_index_writer(mmap, 64 * 1024 * 1024)
            .context("creating BM25 index")?;
        Ok(Bm25Writer { writer: Writer::Fresh(writer), fields })
    }

    /// Starts from the index in `base` (its files hard-linked into `dir`, so the base stays
    /// untouched), deleting the documents of `dead` ordinals.
    pub fn derive(dir: &Path, base: &Path, dead: &[u32]) -> Result<Bm25Writer> {
        for e in std::fs::read_dir(base).with_context(|| format!("reading {}", base.display()))?.flatten() {
            let name = e.file_name();
            let n = name.to_string_lossy();
            if n.ends_with(".lock") || !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let to = dir.join(&name);
            if std::fs::hard_link(e.path(), &to).is_err() {
                std::fs::copy(e.path(), &to)?;
            }
        }
        let index = Index::open_in_dir(dir).context("opening the base BM25 index")?;
        index.tokenizers().register(TOKENIZER, CodeTokenizer);
        let (_, fields) = schema();
        let writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 32 * 1024 * 1024)?;
        for &o in dead {
            writer.delete_term(Term::from_field_u64(fields.ord, o as u64));
        }
        Ok(Bm25Writer { writer: Writer::Derived(writer), fields })
    }

    /// Adds chunk `ord`'s document; returns its token counts.
    pub fn add<'a>(
        &mut self,
        ord: u32,
        content: impl Iterator<Item = (&'a str, u32)>,
        symbol: impl Iterator<Item = &'a str>,
        path: &[String],
    ) -> Result<crate::view::table::Tokens> {
        let f = &self.fields;
        let content = pre_tokenized(content);
        let symbol = pre_tokenized(symbol.map(|t| (t, 1)));
        let tokens = crate::view::table::Tokens {
            content: content.tokens.len() as u32,
            symbol: symbol.tokens.len().min(u16::MAX as usize) as u16,
            path: path.len().min(u16::MAX as usize) as u16,
        };
        let mut doc = TantivyDocument::default();
        doc.add_pre_tokenized_text(f.content, content);
        doc.add_pre_tokenized_text(f.symbol, symbol);
        doc.add_pre_tokenized_text(f.path, pre_tokenized(path.iter().map(|t| (t.as_str(), 1))));
        doc.add_u64(f.ord, ord as u64);
        match &mut self.writer {
            Writer::Fresh(w) => w.add_document(doc)?,
            Writer::Derived(w) => {
                w.add_document(doc)?;
            }
        }
        Ok(tokens)
    }

    pub fn finish(self) -> Result<()> {
        match self.writer {
            Writer::Fresh(w) => {
                w.finalize().context("writing BM25 index")?;
            }
            Writer::Derived(mut w) => {
                w.commit().context("writing BM25 index")?;
                w.wait_merging_threads().context("writing BM25 index")?;
            }
        }
        Ok(())
    }
}

/// An opened BM25 index.
pub struct Bm25 {
    reader: IndexReader,
    fields: Fields,
}

impl Bm25 {
    pub fn open(dir: &Path) -> Result<Bm25> {
        let index = Index::open_in_dir(dir).with_context(|| format!("opening BM25 index {}", dir.display()))?;
        index.tokenizers().register(TOKENIZER, CodeTokenizer);
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(Bm25 { reader, fields: schema().1 })
    }

    /// Top `k` chunk ordinals for the analysed query `terms`, restricted to `allowed` (chunk
    /// ordinals) before ranking when given. BM25 statistics are those of the view's live
    /// chunks (`stats`), so a derived index scores exactly like one built from scratch.
    pub fn search(&self, terms: &[String], k: usize, allowed: Option<&Arc<BitSet>>, stats: &ViewStats) -> Result<Vec<(u32, f32)>> {
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(terms.len() * 3);
        for t in terms {
            for (field, boost) in
                [(self.fields.content, CONTENT_BOOST), (self.fields.symbol, SYMBOL_BOOST), (self.fields.path, PATH_BOOST)]
            {
                let q = TermQuery::new(Term::from_field_text(field, t), IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let provider = LiveStats { searcher: &searcher, stats, fields: &self.fields };
        let top = TopDocs::with_limit(k).order_by_score();
        let hits = match allowed {
            Some(set) => searcher.search_with_statistics_provider(&query, &Allowed { allowed: set.clone(), inner: top }, &provider)?,
            None => searcher.search_with_statistics_provider(&query, &top, &provider)?,
        };
        let mut out = Vec::with_capacity(hits.len());
        for (score, addr) in hits {
            let col: Column<u64> = searcher.segment_reader(addr.segment_ord).fast_fields().u64("ord")?;
            if let Some(ord) = col.first(addr.doc_id) {
                out.push((ord as u32, score));
            }
        }
        Ok(out)
    }

    /// Number of documents (chunks) that contain `term` in their text.
    pub fn doc_freq(&self, term: &str) -> Result<u64> {
        Ok(self.reader.searcher().doc_freq(&Term::from_field_text(self.fields.content, term))?)
    }
}

/// The live chunks' BM25 statistics (from the chunk table).
#[derive(Debug, Clone, Copy)]
pub struct ViewStats {
    pub docs: u64,
    /// Token totals per field: text, symbol, path.
    pub tokens: [u64; 3],
}

struct LiveStats<'a> {
    searcher: &'a tantivy::Searcher,
    stats: &'a ViewStats,
    fields: &'a Fields,
}

impl tantivy::query::Bm25StatisticsProvider for LiveStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let i = if field == self.fields.content {
            0
        } else if field == self.fields.symbol {
            1
        } else {
            2
        };
        Ok(self.stats.tokens[i].max(1))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.stats.docs.max(1))
    }

    /// Documents containing `term`, deleted ones excluded.
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        use tantivy::DocSet;
        let mut n = 0u64;
        for seg in self.searcher.segment_readers() {
            let Some(alive) = seg.alive_bitset() else {
                n += seg.inverted_index(term.field())?.doc_freq(term)? as u64;
                continue;
            };
            if let Some(mut postings) = seg.inverted_index(term.field())?.read_postings(term, IndexRecordOption::Basic)? {
                let mut doc = postings.doc();
                while doc != tantivy::TERMINATED {
                    if alive.is_alive(doc) {
                        n += 1;
                    }
                    doc = postings.advance();
                }
            }
        }
        Ok(n.min(self.stats.docs.max(1)))
    }
}

/// Keeps only allowed chunk ordinals, before the top-k selection.
struct Allowed<C> {
    allowed: Arc<BitSet>,
    inner: C,
}

struct AllowedSegment<S> {
    ord: Column<u64>,
    allowed: Arc<BitSet>,
    inner: S,
}

impl<C: Collector> Collector for Allowed<C> {
    type Fruit = C::Fruit;
    type Child = AllowedSegment<C::Child>;

    fn for_segment(&self, id: SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<Self::Child> {
        Ok(AllowedSegment {
            ord: segment.fast_fields().u64("ord")?,
            allowed: self.allowed.clone(),
            inner: self.inner.for_segment(id, segment)?,
        })
    }

    fn requires_scoring(&self) -> bool {
        self.inner.requires_scoring()
    }

    fn merge_fruits(&self, fruits: Vec<<Self::Child as SegmentCollector>::Fruit>) -> tantivy::Result<Self::Fruit> {
        self.inner.merge_fruits(fruits)
    }
}

impl<S: SegmentCollector> SegmentCollector for AllowedSegment<S> {
    type Fruit = S::Fruit;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(o) = self.ord.first(doc) {
            if self.allowed.contains(o as u32) {
                self.inner.collect(doc, score);
            }
        }
    }

    fn harvest(self) -> S::Fruit {
        self.inner.harvest()
    }
}

/// The Lynx analyser as a tantivy tokenizer (registered for completeness; documents arrive
/// pre-tokenized).
#[derive(Clone, Default)]
pub struct CodeTokenizer;

pub struct CodeTokenStream {
    tokens: Vec<Token>,
    index: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens = Vec::new();
        crate::analyze::tokenize(text, |t| {
            let position = tokens.len();
            tokens.push(Token { offset_from: 0, offset_to: 0, position, text: t.to_string(), position_length: 1 });
        });
        CodeTokenStream { tokens, index: 0 }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        self.index += 1;
        self.index <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.index - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index - 1]
    }
}

/// Whole-file BM25 (the evaluation baseline): one document per file, its chunks' text
/// concatenated, analysed with the same analyser, in a RAM index.
pub struct FileBm25 {
    reader: IndexReader,
    content: Field,
}

impl FileBm25 {
    pub fn build(files: &[(u32, String)]) -> Result<FileBm25> {
        let mut sb = Schema::builder();
        let idx = TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs);
        let content = sb.add_text_field("content", TextOptions::default().set_indexing_options(idx));
        let ord = sb.add_u64_field("ord", NumericOptions::default().set_fast());
        let index = Index::create_in_ram(sb.build());
        index.tokenizers().register(TOKENIZER, CodeTokenizer);
        let mut w: tantivy::IndexWriter = index.writer_with_num_threads(1, 50_000_000)?;
        for (f, text) in files {
            // A file with no live chunk is not in the revision (a view derived from another
            // keeps its slot): as an empty document it would still shift BM25's statistics.
            if text.is_empty() {
                continue;
            }
            let mut doc = TantivyDocument::default();
            doc.add_text(content, text);
            doc.add_u64(ord, *f as u64);
            w.add_document(doc)?;
        }
        w.commit()?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(FileBm25 { reader, content })
    }

    /// Top files (file index, score).
    pub fn search(&self, terms: &[String], k: usize) -> Result<Vec<(u32, f32)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| (Occur::Should, Box::new(TermQuery::new(Term::from_field_text(self.content, t), IndexRecordOption::WithFreqs)) as Box<dyn Query>))
            .collect();
        let searcher = self.reader.searcher();
        let hits = searcher.search(&BooleanQuery::new(clauses), &TopDocs::with_limit(k).order_by_score())?;
        let mut out = Vec::new();
        for (score, addr) in hits {
            let col: Column<u64> = searcher.segment_reader(addr.segment_ord).fast_fields().u64("ord")?;
            if let Some(f) = col.first(addr.doc_id) {
                out.push((f as u32, score));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::FileBm25;

    #[test]
    fn whole_file_scores_ignore_empty_slots() {
        let files = vec![(0, "retry backoff retry".to_string()), (1, "backoff only here".to_string()), (2, "unrelated words".to_string())];
        let mut padded = files.clone();
        padded.extend((3..40).map(|f| (f, String::new())));
        let terms = vec!["retry".to_string(), "backoff".to_string()];
        let a = FileBm25::build(&files).unwrap().search(&terms, 10).unwrap();
        let b = FileBm25::build(&padded).unwrap().search(&terms, 10).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a, b);
    }
}
