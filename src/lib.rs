//! Lynx: a git-native code-context engine. See docs/ARCHITECTURE.md for the map of modules.
//!
//! This crate holds the operations and the surfaces (command line, MCP server, web UI, hooks,
//! watcher); the store, views, retrieval and graph are `lynx-core` (`crates/core`), re-exported
//! here under their own names so that `lynx::engine` and `crate::engine` read as before.

pub use lynx_core::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, graph, index, lang, layer, present,
    progress, repo, search, shard, sources, store, view, workspace,
};

pub mod cli;
pub mod gc;
pub mod hooks;
pub mod integrate;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod ops;
#[cfg(feature = "ui")]
pub mod ui;
pub mod watch;
