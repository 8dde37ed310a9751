//! `git lynx serve`: the MCP server (stdio), which offers the operations as tools and renders
//! their answers as MCP text and structured content. The lower crates' modules it uses are
//! imported (not re-exported) under their own names; what others may use is `mcp::serve`.

use lynx_core::{config, engine, env, error, memory, progress, shard, sources, view, workspace};
use lynx_ops::ops;
use lynx_watch::watch;

pub mod mcp;
