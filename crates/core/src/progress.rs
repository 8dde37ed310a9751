//! Progress on long work: a bar on stderr when it is a terminal and output is not quiet or
//! JSON; otherwise silent. Also counts for the MCP server's "what is loading" answers.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Default)]
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Shared counters readable from other threads (done, total) and the current phase.
    pub state: Arc<ProgressState>,
}

#[derive(Default)]
pub struct ProgressState {
    pub done: AtomicU64,
    pub total: AtomicU64,
    pub phase: std::sync::Mutex<String>,
    /// Where a multi-step job is (`revision 3 of 162`), shown before each phase.
    pub stage: std::sync::Mutex<String>,
}

impl Progress {
    /// A progress reporter that draws only when stderr is a terminal and `enabled`.
    pub fn new(enabled: bool) -> Progress {
        let draw = enabled && std::io::stderr().is_terminal();
        let bar = draw.then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template("{spinner} {msg:<22} [{bar:30}] {pos}/{len} ({rate}, {eta})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    // Whole items per second: "304/s", not "304.0756/s".
                    .with_key("rate", |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0}/s", s.per_sec());
                    })
                    .progress_chars("=> "),
            );
            b
        });
        Progress { bar, state: Arc::default() }
    }

    /// True when progress is drawn (a terminal, not quiet or JSON).
    pub fn visible(&self) -> bool {
        self.bar.is_some()
    }

    pub fn hidden() -> Progress {
        Progress::default()
    }

    /// Names the step of a longer job that the following phases belong to (empty: none).
    pub fn set_stage(&self, stage: &str) {
        if let Ok(mut s) = self.state.stage.lock() {
            *s = stage.to_string();
        }
    }

    pub fn start(&self, phase: &str, total: u64) {
        self.state.done.store(0, Ordering::Relaxed);
        self.state.total.store(total, Ordering::Relaxed);
        let stage = self.state.stage.lock().map(|s| s.clone()).unwrap_or_default();
        let label = if stage.is_empty() { phase.to_string() } else { format!("{stage}: {phase}") };
        if let Ok(mut p) = self.state.phase.lock() {
            *p = label.clone();
        }
        if let Some(b) = &self.bar {
            b.reset();
            b.set_length(total);
            b.set_position(0);
            b.set_message(label);
        }
    }

    pub fn inc(&self, n: u64) {
        self.state.done.fetch_add(n, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if let Ok(mut p) = self.state.phase.lock() {
            p.clear();
        }
    }

    /// "indexing 1,240 of 3,100 files" (empty when idle).
    pub fn describe(&self) -> String {
        let phase = self.state.phase.lock().map(|p| p.clone()).unwrap_or_default();
        if phase.is_empty() {
            return String::new();
        }
        format!(
            "{phase} {} of {}",
            thousands(self.state.done.load(Ordering::Relaxed)),
            thousands(self.state.total.load(Ordering::Relaxed))
        )
    }
}

pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn a_stage_names_the_step_of_a_longer_job() {
        let p = Progress::hidden();
        p.set_stage("revision 3 of 162");
        p.start("indexing files", 40);
        p.inc(4);
        assert_eq!(p.describe(), "revision 3 of 162: indexing files 4 of 40");
        p.set_stage("");
        p.start("embedding chunks", 10);
        assert_eq!(p.describe(), "embedding chunks 0 of 10");
    }
}
