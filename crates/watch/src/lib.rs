//! Lynx's file watcher: keeps a server's views of the working tree (and of its documentation
//! sources) current as files change, for the MCP server and the web UI alike. The operations'
//! and the core's modules are re-exported under their own names.

pub use lynx_ops::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, gc, graph, index, lang, layer, ops,
    present, progress, repo, search, shard, sources, store, view, workspace,
};

pub mod watch;
