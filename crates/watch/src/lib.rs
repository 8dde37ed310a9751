//! Lynx's file watcher: keeps a server's views of the working tree (and of its documentation
//! sources) current as files change, for the MCP server and the web UI alike. The modules it
//! uses are imported (not re-exported) under their own names; what others may use is `watch`.

use lynx_core::{engine, index, sources, store, view};
use lynx_ops::ops;

pub mod watch;
