//! `git lynx ui`: the web interface on the loopback interface, whose every view renders an
//! operation's typed answer. The lower crates' modules it uses are imported (not re-exported) under
//! their own names; what others may use is `ui::serve` and its options.

use lynx_core::{analyze, config, encoding, engine, error, fsutil, memory, repo, shard, sources};
use lynx_ops::ops;
use lynx_watch::watch;

pub mod ui;
