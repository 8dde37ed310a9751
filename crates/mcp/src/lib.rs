//! `git lynx serve`: the MCP server (stdio), which offers the operations as tools and renders
//! their answers as MCP text and structured content. The lower crates' modules are re-exported
//! under their own names.

pub use lynx_ops::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, gc, graph, index, lang, layer,
    memory, ops, present, progress, repo, search, shard, sources, store, view, workspace,
};
pub use lynx_watch::watch;

pub mod mcp;
