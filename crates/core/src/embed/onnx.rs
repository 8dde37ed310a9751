//! Finding and loading ONNX Runtime's shared library (`load-dynamic`: nothing is downloaded at
//! build or run time). Order: `ORT_DYLIB_PATH`, the `model.ort_dylib` setting, Python
//! site-packages (`onnxruntime/capi/libonnxruntime.so*`, as the PyPI wheel ships it), then
//! system library paths. The only module that speaks ONNX Runtime's API (`Session`), and the
//! only one the `transformers` feature turns off: without it a transformer model or
//! cross-encoder is an error naming the feature, and static models work as before.

#[cfg(feature = "transformers")]
use super::EmbedError;
use anyhow::Result;
use std::path::{Path, PathBuf};
#[cfg(feature = "transformers")]
use std::sync::OnceLock;

pub const ENV: &str = crate::env::ORT_DYLIB_PATH;

#[cfg(feature = "transformers")]
static RUNTIME: OnceLock<std::result::Result<(ort::environment::Environment, PathBuf), String>> = OnceLock::new();

/// The process-wide ONNX Runtime environment, loading the library on first use.
#[cfg(feature = "transformers")]
fn environment(setting: Option<&str>) -> Result<&'static ort::environment::Environment> {
    let r = RUNTIME.get_or_init(|| {
        let path = find_library(setting).ok_or_else(not_found_message)?;
        let builder =
            ort::init_from(&path).map_err(|e| format!("could not load ONNX Runtime from {}: {e}", path.display()))?;
        let env = builder.with_name("git-lynx").build().map_err(|e| format!("ONNX Runtime failed to start: {e}"))?;
        tracing::info!("ONNX Runtime loaded from {}", path.display());
        Ok((env, path))
    });
    match r {
        Ok((env, _)) => Ok(env),
        Err(msg) => Err(anyhow::Error::msg(msg.clone())),
    }
}

/// Whether this build can run ONNX models (cargo feature `transformers`): without it, static
/// models still embed, and a transformer or cross-encoder is an error naming the feature.
pub const BUILT: bool = cfg!(feature = "transformers");

/// An ONNX model in ONNX Runtime, fed `n × seq` matrices of token ids by input name: the one
/// place that speaks ONNX Runtime's API (transformers, the cross-encoder and distillation go
/// through it).
#[cfg(feature = "transformers")]
pub struct Session {
    session: std::sync::Mutex<ort::session::Session>,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

/// Built without ONNX Runtime: no session can exist, and opening one says which feature is missing.
#[cfg(not(feature = "transformers"))]
pub enum Session {}

// One declaration per method; without the feature no `Session` exists, so each body is empty
// of meaning there (`match *self {}`) and `open` names the missing feature.
impl Session {
    /// Loads `onnx` with `threads` intra-op threads (0: one per core).
    pub fn open(onnx: &Path, threads: usize, ort_setting: Option<&str>) -> Result<Session> {
        #[cfg(not(feature = "transformers"))]
        {
            let _ = (onnx, threads, ort_setting);
            Err(crate::error::without("transformers", "transformer models and cross-encoders (ONNX Runtime)"))
        }
        #[cfg(feature = "transformers")]
        {
            let env = environment(ort_setting)?;
            let threads =
                if threads == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { threads };
            let builder =
                ort::session::Session::builder(env).map_err(|e| EmbedError::Session { why: e.to_string() })?;
            let mut builder =
                builder.with_intra_threads(threads).map_err(|e| EmbedError::Session { why: e.to_string() })?;
            let session = builder
                .commit_from_file(onnx)
                .map_err(|e| EmbedError::Load { path: onnx.display().to_string(), why: e.to_string() })?;
            let inputs = session.inputs().iter().map(|i| i.name().to_string()).collect();
            let outputs = session.outputs().iter().map(|o| o.name().to_string()).collect();
            Ok(Session { session: std::sync::Mutex::new(session), inputs, outputs })
        }
    }

    pub fn inputs(&self) -> &[String] {
        #[cfg(not(feature = "transformers"))]
        match *self {}
        #[cfg(feature = "transformers")]
        &self.inputs
    }

    pub fn outputs(&self) -> &[String] {
        #[cfg(not(feature = "transformers"))]
        match *self {}
        #[cfg(feature = "transformers")]
        &self.outputs
    }

    /// Runs the model on one `[n, seq]` matrix per input (in `inputs()` order) and returns the
    /// output named `output` (the first when `None`) as its shape and values.
    pub fn run(
        &self,
        feed: Vec<Vec<i64>>,
        n: usize,
        seq: usize,
        output: Option<&str>,
    ) -> Result<(Vec<usize>, Vec<f32>)> {
        #[cfg(not(feature = "transformers"))]
        {
            let _ = (feed, n, seq, output);
            match *self {}
        }
        #[cfg(feature = "transformers")]
        {
            let mut values: Vec<(String, ort::value::DynValue)> = Vec::with_capacity(feed.len());
            for (name, data) in self.inputs.iter().zip(feed) {
                values.push((
                    name.clone(),
                    ort::value::Tensor::from_array((vec![n as i64, seq as i64], data))?.into_dyn(),
                ));
            }
            let mut session = self.session.lock().map_err(|_| EmbedError::Poisoned {})?;
            let outputs = session.run(values)?;
            let value = match output {
                Some(name) => &outputs[name],
                None => &outputs[0],
            };
            let (shape, data) = value.try_extract_tensor::<f32>()?;
            Ok((shape.iter().map(|&d| d as usize).collect(), data.to_vec()))
        }
    }
}

pub fn not_found_message() -> String {
    format!(
        "ONNX Runtime's shared library was not found. Install it with `pip install onnxruntime` \
         (Lynx finds it in Python's site-packages), or set {ENV}=/path/to/libonnxruntime.so, \
         or set model.ort_dylib in .lynx/config.toml"
    )
}

/// The first candidate library that exists.
pub fn find_library(setting: Option<&str>) -> Option<PathBuf> {
    if let Some(p) = crate::env::path(ENV) {
        return Some(p); // explicit: report its own load error if wrong
    }
    if let Some(s) = setting.filter(|s| !s.is_empty()) {
        return Some(PathBuf::from(s));
    }
    for dir in site_packages_dirs() {
        if let Some(lib) = newest_lib(&dir.join("onnxruntime").join("capi")) {
            return Some(lib);
        }
    }
    for dir in system_lib_dirs() {
        if let Some(lib) = newest_lib(&dir) {
            return Some(lib);
        }
    }
    None
}

/// `libonnxruntime.so` or the highest `libonnxruntime.so.X.Y.Z` in `dir`.
fn newest_lib(dir: &Path) -> Option<PathBuf> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name == "libonnxruntime.so" || name.starts_with("libonnxruntime.so.") || name == "libonnxruntime.dylib"
        })
        .collect();
    found.sort_by_key(|p| version_key(p));
    found.pop()
}

fn version_key(p: &Path) -> Vec<u32> {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.trim_start_matches("libonnxruntime.so").split('.').filter_map(|s| s.parse().ok()).collect()
}

fn glob_dirs(pattern_parent: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(pattern_parent) else { return Vec::new() };
    let mut v: Vec<PathBuf> =
        rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(prefix)).map(|e| e.path()).collect();
    v.sort();
    v.reverse();
    v
}

/// Python package directories where `pip install onnxruntime` puts the library: the active
/// virtualenv or conda env, the user site, pyenv versions and the system interpreters.
fn site_packages_dirs() -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    use crate::env;
    for var in [env::VIRTUAL_ENV, env::CONDA_PREFIX] {
        if let Some(p) = env::path(var) {
            prefixes.push(p);
        }
    }
    // The Python a user would run: the first `python3` / `python` on PATH, whose prefix is
    // its `bin`'s parent (a virtual environment first on PATH, activated or not).
    if let Some(path) = env::get_os(env::PATH) {
        for dir in std::env::split_paths(&path) {
            if ["python3", "python"].iter().any(|n| dir.join(n).is_file()) {
                if let Some(prefix) = dir.parent() {
                    prefixes.push(prefix.to_path_buf());
                }
                break;
            }
        }
    }
    let home = env::home();
    if let Some(h) = &home {
        prefixes.push(h.join(".local"));
        let pyenv = env::path(env::PYENV_ROOT).unwrap_or_else(|| h.join(".pyenv"));
        prefixes.extend(glob_dirs(&pyenv.join("versions"), ""));
    }
    prefixes.extend([PathBuf::from("/usr/local"), PathBuf::from("/usr"), PathBuf::from("/opt/conda")]);
    let mut out = Vec::new();
    for pre in prefixes {
        for lib in ["lib", "lib64"] {
            for py in glob_dirs(&pre.join(lib), "python3") {
                out.push(py.join("site-packages"));
                out.push(py.join("dist-packages"));
            }
        }
    }
    out.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    out
}

fn system_lib_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = crate::env::get_os(crate::env::LD_LIBRARY_PATH)
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    out.extend(
        [
            "/usr/local/lib",
            "/usr/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/opt/homebrew/lib",
        ]
        .into_iter()
        .map(PathBuf::from),
    );
    out
}
