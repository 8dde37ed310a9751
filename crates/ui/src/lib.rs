//! `git lynx ui`: the web interface on the loopback interface, whose every view renders an
//! operation's typed answer. The lower crates' modules are re-exported under their own names.

pub use lynx_ops::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, gc, graph, index, lang, layer,
    memory, ops, present, progress, repo, search, shard, sources, store, view, workspace,
};
pub use lynx_watch::watch;

pub mod ui;
