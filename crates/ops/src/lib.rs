//! Lynx's operations: every question an agent or a user can ask (search, navigation, impact,
//! graph, context…) and every command (index, objects, sources, model, evaluate, gc), each with
//! its one argument type and its typed answer, rendered by the surfaces above (command line,
//! MCP server, web UI) and never aware of them. The core's modules are imported (not
//! re-exported) under their own names, so `crate::engine` reads here as in the core; a surface
//! that needs a core module depends on `lynx-core` itself. What others may use: `ops` (each
//! operation's arguments, run function and result type; `ops::registry`) and `gc`.

use lynx_core::{
    analyze, chunk, config, docsource, embed, encoding, engine, env, error, fsutil, graph, index, lang, layer, present,
    progress, repo, search, shard, sources, store, view, workspace,
};

pub mod gc;
pub mod ops;
