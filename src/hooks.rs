//! `git lynx hooks install | uninstall`: the pre-commit impact report and the post-commit /
//! post-checkout / post-merge background index, installed beside existing hooks: a hook that
//! is already there is kept as `<name>.lynx-chained` and runs first.

use crate::ops::Answer;
use crate::workspace::Workspace;
use anyhow::{Context, Result};
use std::path::PathBuf;

const PRE_COMMIT: &str = include_str!("../hooks/pre-commit");
const POST_INDEX: &str = include_str!("../hooks/post-index");
/// Every Lynx hook script carries this line.
const MARKER: &str = "Installed by `git lynx hooks install`";
const CHAINED: &str = ".lynx-chained";

fn hooks_dir(ws: &Workspace) -> Result<PathBuf> {
    let repo = ws.repo.local();
    let configured = repo.config_snapshot().trusted_path("core.hooksPath").ok().flatten();
    let dir = match configured {
        Some(p) if p.is_absolute() => p,
        Some(p) => ws.repo.workdir.clone().unwrap_or_else(|| ws.repo.common_dir.clone()).join(p),
        None => ws.repo.common_dir.join("hooks"),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

fn scripts() -> [(&'static str, &'static str); 4] {
    [("pre-commit", PRE_COMMIT), ("post-commit", POST_INDEX), ("post-checkout", POST_INDEX), ("post-merge", POST_INDEX)]
}

fn is_ours(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(MARKER))
}

pub fn install(ws: &Workspace) -> Result<Answer> {
    let dir = hooks_dir(ws)?;
    let mut lines = Vec::new();
    let mut installed = Vec::new();
    for (name, script) in scripts() {
        let path = dir.join(name);
        let chained = dir.join(format!("{name}{CHAINED}"));
        if path.exists() && !is_ours(&path) {
            if chained.exists() {
                anyhow::bail!("{} and {} both exist; remove one before installing", path.display(), chained.display());
            }
            std::fs::rename(&path, &chained)?;
            lines.push(format!("{name}: kept your hook as {} (runs first)", chained.display()));
        }
        crate::fsutil::write_atomic(&path, script.as_bytes())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        installed.push(name);
        lines.push(format!("{name}: installed"));
    }
    let text = format!("hooks in {}:\n  {}\n", dir.display(), lines.join("\n  "));
    Ok(Answer::new("hooks", None, serde_json::json!({"dir": dir.display().to_string(), "installed": installed}), text))
}

pub fn uninstall(ws: &Workspace) -> Result<Answer> {
    let dir = hooks_dir(ws)?;
    let mut lines = Vec::new();
    for (name, _) in scripts() {
        let path = dir.join(name);
        let chained = dir.join(format!("{name}{CHAINED}"));
        if path.exists() && is_ours(&path) {
            std::fs::remove_file(&path)?;
            lines.push(format!("{name}: removed"));
        }
        if chained.exists() && !path.exists() {
            std::fs::rename(&chained, &path)?;
            lines.push(format!("{name}: restored your original hook"));
        }
    }
    if lines.is_empty() {
        lines.push("no Lynx hooks were installed".into());
    }
    let text = format!("hooks in {}:\n  {}\n", dir.display(), lines.join("\n  "));
    Ok(Answer::new("hooks", None, serde_json::json!({"dir": dir.display().to_string()}), text))
}
