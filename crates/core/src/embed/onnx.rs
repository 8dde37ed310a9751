//! Finding and loading ONNX Runtime's shared library (`load-dynamic`: nothing is downloaded at
//! build or run time). Order: `ORT_DYLIB_PATH`, the `model.ort_dylib` setting, Python
//! site-packages (`onnxruntime/capi/libonnxruntime.so*`, as the PyPI wheel ships it), then
//! system library paths.

use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub const ENV: &str = crate::env::ORT_DYLIB_PATH;

static RUNTIME: OnceLock<std::result::Result<(ort::environment::Environment, PathBuf), String>> = OnceLock::new();

/// The process-wide ONNX Runtime environment, loading the library on first use.
pub fn environment(setting: Option<&str>) -> Result<&'static ort::environment::Environment> {
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
        Err(msg) => Err(anyhow!("{msg}")),
    }
}

/// Where the loaded (or loadable) library is.
pub fn library_path(setting: Option<&str>) -> Option<PathBuf> {
    match RUNTIME.get() {
        Some(Ok((_, p))) => Some(p.clone()),
        _ => find_library(setting),
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
