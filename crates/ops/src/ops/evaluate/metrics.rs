//! Retrieval metrics over ranked file lists: Recall@k, Hit@k, MRR, NDCG@10 (binary relevance).

/// Metrics of one ranked list against the set of relevant items.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Scores {
    pub recall_1: f64,
    pub recall_5: f64,
    pub recall_10: f64,
    pub hit_1: f64,
    pub hit_5: f64,
    pub hit_10: f64,
    pub mrr: f64,
    pub ndcg_10: f64,
}

pub fn score(ranked: &[String], relevant: &[String]) -> Scores {
    let rel: std::collections::HashSet<&str> = relevant.iter().map(String::as_str).collect();
    if rel.is_empty() {
        return Scores::default();
    }
    let hits_at = |k: usize| ranked.iter().take(k).filter(|r| rel.contains(r.as_str())).count();
    let recall = |k: usize| hits_at(k) as f64 / rel.len() as f64;
    let hit = |k: usize| if hits_at(k) > 0 { 1.0 } else { 0.0 };
    let mrr = ranked.iter().position(|r| rel.contains(r.as_str())).map_or(0.0, |i| 1.0 / (i + 1) as f64);
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, r)| rel.contains(r.as_str()))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let idcg: f64 = (0..rel.len().min(10)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    Scores {
        recall_1: recall(1),
        recall_5: recall(5),
        recall_10: recall(10),
        hit_1: hit(1),
        hit_5: hit(5),
        hit_10: hit(10),
        mrr,
        ndcg_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
    }
}

/// Mean of several score sets.
pub fn mean(all: &[Scores]) -> Scores {
    let n = all.len().max(1) as f64;
    let mut m = Scores::default();
    for s in all {
        m.recall_1 += s.recall_1 / n;
        m.recall_5 += s.recall_5 / n;
        m.recall_10 += s.recall_10 / n;
        m.hit_1 += s.hit_1 / n;
        m.hit_5 += s.hit_5 / n;
        m.hit_10 += s.hit_10 / n;
        m.mrr += s.mrr / n;
        m.ndcg_10 += s.ndcg_10 / n;
    }
    m
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hand_computed_values() {
        // Relevant a and c; ranked: x a y c.
        let s = score(&v(&["x", "a", "y", "c"]), &v(&["a", "c"]));
        assert_eq!(s.recall_1, 0.0);
        assert_eq!(s.recall_5, 1.0);
        assert_eq!(s.hit_1, 0.0);
        assert_eq!(s.hit_5, 1.0);
        assert_eq!(s.mrr, 0.5);
        // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((s.ndcg_10 - dcg / idcg).abs() < 1e-12);
        let s = score(&v(&["a", "b"]), &v(&["a", "z", "q"]));
        assert!((s.recall_1 - 1.0 / 3.0).abs() < 1e-12 && s.mrr == 1.0);
        let s = score(&v(&["b"]), &v(&["a"]));
        assert_eq!((s.mrr, s.ndcg_10, s.hit_10), (0.0, 0.0, 0.0));
        let m = mean(&[score(&v(&["a"]), &v(&["a"])), score(&v(&["b"]), &v(&["a"]))]);
        assert_eq!(m.mrr, 0.5);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 100.0], 0.5), 3.0);
    }
}
