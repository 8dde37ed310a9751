//! The static model built into the program (`models/builtin/`, feature `builtin-model`):
//! all-MiniLM-L6-v2 distilled by `model distill` to 256 int8 dimensions over its ASCII
//! vocabulary. Dense retrieval uses it when the configured model is not on this machine
//! (not downloaded yet, offline, `HF_HUB_OFFLINE`), so hybrid search works on the first run
//! without a network; a configured model that is there always wins.

use super::Embedder;
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;

/// The name the built-in model goes by in answers, `status` and the vector layer's records.
pub const NAME: &str = "builtin/all-MiniLM-L6-v2-static-int8";

#[cfg(feature = "builtin-model")]
mod files {
    pub const WEIGHTS: &[u8] = include_bytes!("../../../../models/builtin/model.safetensors");
    pub const TOKENIZER: &[u8] = include_bytes!("../../../../models/builtin/tokenizer.json");
    pub const CONFIG: &[u8] = include_bytes!("../../../../models/builtin/config.json");
}

/// Whether this build carries the model and the environment lets it be used
/// (`LYNX_BUILTIN_MODEL=0` turns the fallback off).
pub fn enabled() -> bool {
    cfg!(feature = "builtin-model")
        && !matches!(
            crate::env::get(crate::env::LYNX_BUILTIN_MODEL).as_deref().map(str::trim),
            Some("0" | "off" | "false" | "no")
        )
}

/// Loads the built-in model; `cache_dir` keeps its verified vocabulary between runs.
#[cfg(feature = "builtin-model")]
pub fn load(cache_dir: Option<&Path>) -> Result<Arc<dyn Embedder>> {
    use std::sync::OnceLock;
    // The content hash names the vectors: a rebuilt model never reuses the old one's.
    static HASH: OnceLock<String> = OnceLock::new();
    let hash = HASH.get_or_init(|| {
        let mut h = blake3::Hasher::new();
        for part in [files::WEIGHTS, files::TOKENIZER, files::CONFIG] {
            h.update(blake3::hash(part).as_bytes());
        }
        h.finalize().to_hex()[..16].to_string()
    });
    let fp = crate::fsutil::short_hash(&[
        b"static",
        NAME.as_bytes(),
        hash.as_bytes(),
        super::static_model::TEXT_PREP.as_bytes(),
    ]);
    let m = super::static_model::StaticModel::load_static(
        NAME,
        files::WEIGHTS,
        files::TOKENIZER,
        files::CONFIG,
        fp,
        cache_dir,
    )?;
    Ok(Arc::new(m))
}

#[cfg(not(feature = "builtin-model"))]
pub fn load(_cache_dir: Option<&Path>) -> Result<Arc<dyn Embedder>> {
    anyhow::bail!("this build has no built-in model (built without the `builtin-model` feature)")
}

#[cfg(all(test, feature = "builtin-model"))]
mod tests {
    #[test]
    fn the_built_in_model_loads_and_ranks_related_code_first() {
        let m = super::load(None).unwrap();
        assert_eq!(m.dim(), 256);
        let q = m.embed_query("compute the distance between two points").unwrap();
        let docs = m
            .embed_documents(&[
                "fn euclidean_distance(a: Point, b: Point) -> f64 { ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt() }",
                "def parse_json_config(path): return json.load(open(path))",
            ])
            .unwrap();
        let (near, far) = (super::super::dot(&q, &docs[..256]), super::super::dot(&q, &docs[256..]));
        assert!(near > far + 0.05, "related {near} vs unrelated {far}");
        let norm: f32 = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
}
