//! Lynx: a git-native code-context engine. See docs/ARCHITECTURE.md for the map of modules.
//!
//! This crate is the command line (and the binary), with the git hooks and the assistants'
//! configuration it installs. Below it, each its own crate: the MCP server (`lynx-mcp`) and the
//! web UI (`lynx-ui`), the file watcher both keep running (`lynx-watch`), the operations they
//! all render (`lynx-ops`), and the store, views, retrieval and graph (`lynx-core`); the
//! modules this crate uses are imported (not re-exported) under their own names, so
//! `crate::engine` and `crate::mcp` read as they do in the crates that own them; a program or a
//! test that needs a lower module names its crate (`lynx_core::store`, `lynx_ops::ops`).

use lynx_core::{config, embed, engine, env, error, fsutil, present, progress, repo, shard, sources, workspace};
#[cfg(feature = "mcp")]
use lynx_mcp::mcp;
use lynx_ops::ops;
#[cfg(feature = "ui")]
use lynx_ui::ui;
use lynx_watch::watch;

pub mod cli;
pub mod commands;
pub mod hooks;
pub mod integrate;
