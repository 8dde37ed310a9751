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
                ProgressStyle::with_template("{spinner} {msg:<22} [{bar:30}] {pos}/{len} ({rate}{left})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    // Whole items per second: "304/s", not "304.0756/s".
                    .with_key("rate", |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0}/s", s.per_sec());
                    })
                    // Time left only once enough of the phase is measured (see `time_left`).
                    .with_key("left", |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        if let Some(left) = time_left(s.pos(), s.len().unwrap_or(0), s.elapsed()) {
                            let _ = write!(w, ", {} left", short_duration(left));
                        }
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

/// The share of a phase done, and the time spent on it, before its pace is taken to say how
/// long the rest takes: the first items of a phase (warming caches, loading a model, the
/// first large files) are not its pace, and an estimate from them said 43–57 s for a 3 s job.
const MEASURED_SHARE: f64 = 0.2;
const MEASURED_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// How long the rest of a phase takes at the pace so far: `None` until at least
/// `MEASURED_SHARE` of it and `MEASURED_TIME` have passed (no estimate beats a wrong one).
pub fn time_left(done: u64, total: u64, elapsed: std::time::Duration) -> Option<std::time::Duration> {
    if total == 0 || done == 0 || done >= total {
        return None;
    }
    if (done as f64) < MEASURED_SHARE * total as f64 || elapsed < MEASURED_TIME {
        return None;
    }
    Some(elapsed.mul_f64((total - done) as f64 / done as f64))
}

/// "7s", "2m05s", "1h03m".
fn short_duration(d: std::time::Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
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
    use super::{Progress, short_duration, time_left};
    use std::time::Duration;

    #[test]
    fn no_time_left_is_shown_until_enough_is_measured() {
        let secs = Duration::from_secs_f64;
        // A 3 s job whose first tenth took 0.3 s: too little done, too soon.
        assert_eq!(time_left(100, 1000, secs(0.3)), None);
        // Half done, but after one second: still too soon.
        assert_eq!(time_left(500, 1000, secs(1.0)), None);
        // Ten seconds in, 10% done: too little of the work measured.
        assert_eq!(time_left(100, 1000, secs(10.0)), None);
        // A fifth done in 2 s: the rest at that pace.
        assert_eq!(time_left(200, 1000, secs(2.0)), Some(secs(8.0)));
        assert_eq!(time_left(750, 1000, secs(3.0)), Some(secs(1.0)));
        // Nothing to estimate.
        assert_eq!(time_left(0, 0, secs(5.0)), None);
        assert_eq!(time_left(1000, 1000, secs(5.0)), None);
        assert_eq!(short_duration(secs(7.4)), "7s");
        assert_eq!(short_duration(secs(125.0)), "2m05s");
        assert_eq!(short_duration(secs(3780.0)), "1h03m");
    }

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
