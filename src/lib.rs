//! Lynx: a git-native code-context engine. See docs/ARCHITECTURE.md for the map of modules.

pub mod analyze;
pub mod chunk;
pub mod fsutil;
pub mod lang;
pub mod layer;
pub mod repo;
pub mod store;
