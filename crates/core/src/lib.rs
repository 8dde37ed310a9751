//! Lynx's core: everything below the operations — git and blobs, the per-blob layers and their
//! segments, the store and its shards, views at any revision, retrieval and the code graph, and
//! the engine a process keeps warm. It knows nothing of commands, the MCP server or the web UI
//! (the `git-lynx` crate above it does); the compiler holds that direction. Within the crate,
//! modules keep the levels docs/ARCHITECTURE.md lists, which `tests/architecture.rs` checks.

pub mod analyze;
pub mod chunk;
pub mod config;
pub mod docsource;
pub mod embed;
pub mod encoding;
pub mod engine;
pub mod env;
pub mod error;
pub mod fsutil;
pub mod graph;
pub mod index;
pub mod lang;
pub mod layer;
pub mod memory;
pub mod present;
pub mod progress;
pub mod repo;
pub mod search;
pub mod shard;
pub mod sources;
pub mod store;
pub mod view;
pub mod workspace;
