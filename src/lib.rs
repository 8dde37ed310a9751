//! Lynx: a git-native code-context engine. See docs/ARCHITECTURE.md for the map of modules.
//!
//! This crate is the command line (and the binary), with the git hooks and the assistants'
//! configuration it installs. Below it, each its own crate: the MCP server (`lynx-mcp`) and the
//! web UI (`lynx-ui`), the file watcher both keep running (`lynx-watch`), the operations they
//! all render (`lynx-ops`), and the store, views, retrieval and graph (`lynx-core`); their
//! modules are re-exported here under their own names, so `lynx::engine`, `lynx::ops` and
//! `crate::mcp` read the same on either side of a crate boundary.

pub use lynx_core::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, graph, index, lang, layer, memory,
    present, progress, repo, search, shard, sources, store, view, workspace,
};
#[cfg(feature = "mcp")]
pub use lynx_mcp::mcp;
pub use lynx_ops::{gc, ops};
#[cfg(feature = "ui")]
pub use lynx_ui::ui;
pub use lynx_watch::watch;

pub mod cli;
pub mod commands;
pub mod hooks;
pub mod integrate;
