//! Lynx: a git-native code-context engine. See docs/ARCHITECTURE.md for the map of modules.

pub mod analyze;
pub mod chunk;
pub mod cli;
pub mod config;
pub mod embed;
pub mod engine;
pub mod eval;
pub mod error;
pub mod fsutil;
pub mod graph;
pub mod gc;
pub mod hooks;
pub mod index;
pub mod integrate;
pub mod lang;
pub mod mcp;
pub mod layer;
pub mod ops;
pub mod progress;
pub mod repo;
pub mod search;
pub mod sources;
pub mod store;
pub mod view;
pub mod watch;
pub mod workspace;
