//! Every environment variable Lynx reads, named once with what it means, and read through one
//! set of accessors (no other module calls `std::env::var`). docs/CONFIG.md lists them for users.

use std::ffi::OsString;
use std::path::PathBuf;

/// The embedding model (`none` / `off`: no dense retrieval); wins over the configuration.
pub const LYNX_MODEL: &str = "LYNX_MODEL";
/// Where the user configuration lives (default `$XDG_CONFIG_HOME/lynx`, `~/.config/lynx`).
pub const LYNX_CONFIG_HOME: &str = "LYNX_CONFIG_HOME";
/// Seconds a writer waits for the store's lock.
pub const LYNX_LOCK_TIMEOUT: &str = "LYNX_LOCK_TIMEOUT";
/// Other object directories to read segments from (checked unless trusted).
pub const LYNX_ALTERNATE_OBJECT_DIRECTORIES: &str = "LYNX_ALTERNATE_OBJECT_DIRECTORIES";
/// `0` / `off`: no fallback to the built-in model when the configured one is not on this
/// machine (dense retrieval is then off until it is).
pub const LYNX_BUILTIN_MODEL: &str = "LYNX_BUILTIN_MODEL";
/// Connect and read timeouts of model downloads, and the whole-download limit (seconds).
pub const LYNX_NET_TIMEOUT: &str = "LYNX_NET_TIMEOUT";
pub const LYNX_DOWNLOAD_TIMEOUT: &str = "LYNX_DOWNLOAD_TIMEOUT";
/// How long an MCP tool waits for indexing before answering from what is there (seconds).
pub const LYNX_TOOL_WAIT_SECONDS: &str = "LYNX_TOOL_WAIT_SECONDS";
/// Largest request line `serve` reads (MiB); wins over `serve.max_request_mb`.
pub const LYNX_MAX_REQUEST_MB: &str = "LYNX_MAX_REQUEST_MB";
/// Headless Chromium for webdoc sources with `render_js` (default: found on PATH).
pub const LYNX_CHROMIUM: &str = "LYNX_CHROMIUM";
/// Log filter in `tracing`'s syntax (`debug`, `lynx=info,ort=warn`); wins over `-v` / `-q`.
pub const LYNX_LOG: &str = "LYNX_LOG";
/// The MCP tool profile.
pub const LYNX_TOOL_PROFILE: &str = "LYNX_TOOL_PROFILE";
/// A LynxMCP `config.json` to read sources and settings from.
pub const RAG_CONFIG_PATH: &str = "RAG_CONFIG_PATH";
/// A workspace file (`lynx-workspace.toml`): the repositories every command answers across;
/// `--workspace` wins over it.
pub const LYNX_WORKSPACE: &str = "LYNX_WORKSPACE";
/// ONNX Runtime's shared library.
pub const ORT_DYLIB_PATH: &str = "ORT_DYLIB_PATH";
/// The HuggingFace hub: cache, home, offline switch, endpoint (mirror) and token.
pub const HF_HUB_CACHE: &str = "HF_HUB_CACHE";
pub const HF_HOME: &str = "HF_HOME";
pub const HF_HUB_OFFLINE: &str = "HF_HUB_OFFLINE";
pub const HF_ENDPOINT: &str = "HF_ENDPOINT";
pub const HF_TOKEN: &str = "HF_TOKEN";
/// Output: `NO_COLOR` set turns colour off; `TERM=dumb` too.
pub const NO_COLOR: &str = "NO_COLOR";
pub const TERM: &str = "TERM";
/// Where things are: the home and XDG directories, the executable search path, git's
/// repository override, and the Python environments ONNX Runtime may be installed in.
pub const HOME: &str = "HOME";
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
pub const PATH: &str = "PATH";
pub const GIT_DIR: &str = "GIT_DIR";
pub const VIRTUAL_ENV: &str = "VIRTUAL_ENV";
pub const CONDA_PREFIX: &str = "CONDA_PREFIX";
pub const PYENV_ROOT: &str = "PYENV_ROOT";
pub const LD_LIBRARY_PATH: &str = "LD_LIBRARY_PATH";
/// Codex's configuration folder (default `~/.codex`): `init --client codex` edits its
/// `config.toml`.
pub const CODEX_HOME: &str = "CODEX_HOME";
/// The shared object store (`s3://bucket/prefix`, `file:///dir`, `https://…` read-only) that
/// `index` reads segments from and `push --objects` writes to; wins over `store.objects_url`.
pub const LYNX_OBJECTS_URL: &str = "LYNX_OBJECTS_URL";
/// The S3 client's settings and credentials, read as the AWS tools read them (every `AWS_…`
/// variable the client knows: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// `AWS_REGION`, `AWS_ENDPOINT_URL` / `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, …; see `aws_vars`).
pub const AWS_PREFIX: &str = "AWS_";
/// Where `man` looks for pages (`man --install` says whether its directory is there).
pub const MANPATH: &str = "MANPATH";

/// The value when set, valid Unicode and not empty.
pub fn get(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The raw value when set and not empty (paths need not be Unicode).
pub fn get_os(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

pub fn path(name: &str) -> Option<PathBuf> {
    get_os(name).map(PathBuf::from)
}

/// Whether the variable is set at all (even empty).
pub fn is_set(name: &str) -> bool {
    std::env::var_os(name).is_some()
}

/// A switch: set and not `0`, `false` or empty.
pub fn flag(name: &str) -> bool {
    get(name).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// A number, when set and parseable.
pub fn number<T: std::str::FromStr>(name: &str) -> Option<T> {
    get(name).and_then(|v| v.trim().parse().ok())
}

/// Every set `AWS_…` variable (name, value), for the S3 client's standard chain.
pub fn aws_vars() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| k.starts_with(AWS_PREFIX) && !v.is_empty())
        .collect()
}

/// The home directory.
pub fn home() -> Option<PathBuf> {
    path(HOME)
}
