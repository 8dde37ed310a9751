//! The long-running commands: `serve` (MCP on stdio), `ui` (the local web interface) and
//! `watch`. They own stdout while they run and print no answer of their own.

use super::Ctx;
use crate::ops::Answer;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Tool profile: core, standard (default) or full.
    #[arg(long, value_enum)]
    pub profile: Option<crate::config::ToolProfile>,
    /// A LynxMCP config.json (config_version 2) to read sources from (also RAG_CONFIG_PATH).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Do not watch the working tree.
    #[arg(long)]
    pub no_watch: bool,
}

#[derive(Args, Debug)]
pub struct UiArgs {
    /// Port to listen on (default: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Open the link in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Allow actions that write (feedback); reading is all it does otherwise.
    #[arg(long)]
    pub allow_write: bool,
}

fn ended(operation: &'static str) -> Answer {
    Answer::new(operation, None, serde_json::json!({}), String::new())
}

#[cfg(not(feature = "mcp"))]
pub fn serve(_: &Ctx, _: &ServeArgs) -> Result<Answer> {
    Err(crate::error::without("mcp", "the MCP server"))
}

#[cfg(feature = "mcp")]
pub fn serve(cx: &Ctx, a: &ServeArgs) -> Result<Answer> {
    let opts = crate::mcp::ServeOptions {
        dir: cx.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        profile: a.profile,
        model: cx.model.clone(),
        no_dense: cx.no_dense,
        lynxmcp_config: a.config.clone(),
        workspace: cx.workspace.clone(),
        watch: !a.no_watch,
    };
    crate::mcp::serve(opts)?;
    Ok(ended("serve"))
}

#[cfg(not(feature = "ui"))]
pub fn ui(_: &Ctx, _: &UiArgs) -> Result<Answer> {
    Err(crate::error::without("ui", "the web UI"))
}

#[cfg(feature = "ui")]
pub fn ui(cx: &Ctx, a: &UiArgs) -> Result<Answer> {
    let opts = crate::ui::Options { port: a.port, open: a.open, allow_write: a.allow_write };
    let json = cx.json;
    crate::ui::serve(
        || cx.sources(),
        opts,
        |url| {
            // The link is the one line on stdout (a script reads it); the rest is for people.
            if json {
                println!("{}", serde_json::json!({"ok": true, "operation": "ui", "url": url}));
            } else {
                println!("{url}");
                eprintln!("Lynx UI: open the link above (it holds this run's secret); Ctrl-C stops it");
            }
            use std::io::Write;
            let _ = std::io::stdout().flush();
        },
    )?;
    Ok(ended("ui"))
}

pub fn watch(cx: &Ctx) -> Result<Answer> {
    let e = cx.engine()?;
    let debounce = std::time::Duration::from_millis(e.ws.config.watch.debounce_ms);
    crate::watch::run_cli(&e, debounce, cx.json)?;
    Ok(ended("watch"))
}
