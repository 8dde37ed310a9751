//! The command line: `git lynx <command>`. Parses arguments, opens the engine, runs one
//! operation and prints its text or its JSON envelope.

use crate::commands::evaluate::EvalCmd;
use crate::commands::graph::GraphCmd;
use crate::commands::model::ModelCmd;
use crate::commands::setup::{self, HooksCmd};
use crate::commands::share::{self, ObjectsCmd};
use crate::commands::sources::{SourceCmd, WorkspaceCmd};
use crate::commands::upkeep::{self, DebugCmd, IndexArgs};
use crate::commands::{self, Ctx, serve};
use crate::error;
use crate::ops::registry::{self, Operation};
use crate::ops::{self, Answer};
use anyhow::Result;
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// `--version`: the release, the commit it was built from, and what the build can do.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("LYNX_COMMIT"),
    " ",
    env!("LYNX_COMMIT_DATE"),
    ")\nfeatures: static embeddings (pure Rust), transformers and cross-encoders through ONNX Runtime (loaded at run time), ",
    "tree-sitter chunking and code graph, MCP server (stdio), Parquet/zstd object store"
);

#[derive(Parser, Debug)]
#[command(
    name = "git-lynx",
    bin_name = "git lynx",
    version,
    long_version = LONG_VERSION,
    about = "Git-native code search and navigation for AI coding assistants",
    after_help = "`git lynx help <command>` or `git lynx <command> --help` for one command; `git lynx man --install` for the manual page."
)]
pub struct Cli {
    /// Run as if started in <path> (like git -C).
    #[arg(short = 'C', global = true, help_heading = "Global options", value_name = "path")]
    pub dir: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,
    /// Print JSON Lines: one object per result (`"type": "result"`), then the rest of the
    /// answer (`"type": "summary"`), for streaming into other tools.
    #[arg(long, global = true, help_heading = "Global options", conflicts_with = "json")]
    pub jsonl: bool,
    /// No progress output, fewer logs, and no report from commands that change things (index,
    /// gc, init, remove…); answers to questions still print. `--json` always prints.
    #[arg(long, short = 'q', global = true, help_heading = "Global options")]
    pub quiet: bool,
    /// Embedding model: a HuggingFace repo id or a local folder (default: LYNX_MODEL, then the config).
    #[arg(long, global = true, help_heading = "Global options", value_name = "NAME|PATH")]
    pub model: Option<String>,
    /// Turn dense (embedding) retrieval off for this run.
    #[arg(long, global = true, help_heading = "Global options")]
    pub no_dense: bool,
    /// More logs on stderr (-v info, -vv debug).
    #[arg(long, short = 'v', global = true, help_heading = "Global options", action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Answer across the repositories a workspace file lists (`lynx-workspace.toml`; default:
    /// LYNX_WORKSPACE): every question asks them all unless `--repo` names one.
    #[arg(long, global = true, help_heading = "Global options", value_name = "FILE")]
    pub workspace: Option<PathBuf>,
    /// Colour in text output and logs: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, help_heading = "Global options", value_name = "WHEN", default_value = "auto")]
    pub color: crate::present::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Index the working tree, or the given revisions, into the object store.
    Index(IndexArgs),
    /// Search code: BM25 and embeddings fused (hybrid), or one of them.
    Search(ops::search::SearchArgs),
    /// Ask query variants in order; stop at the first strong result set.
    DeepSearch(ops::deep_search::DeepArgs),
    /// Where a symbol is defined (graph, with a lexical fallback).
    FindDefinition(ops::nav::SymbolArgs),
    /// Who uses a symbol: graph callers and subclasses plus lexical references.
    FindUsages(ops::nav::UsagesArgs),
    /// Tests that exercise a symbol (through the call graph, and by file naming convention).
    FindTestsFor(ops::nav::TestsArgs),
    /// Code similar to a snippet or to a file's chunks.
    FindSimilar(ops::similar::SimilarArgs),
    /// Definition, callers, callees, bases and tests of a symbol.
    DescribeSymbol(ops::nav::SymbolArgs),
    /// Who reads, writes, maps or calls a table, column (`TABLE.COLUMN`) or stored procedure;
    /// with no name, every table the code touches.
    DataAccess(ops::data_access::DataAccessArgs),
    /// A symbol's code, the lines around it and its direct neighbours (type, bases, callees,
    /// callers), packed into a token budget for an agent's context window.
    Context(ops::context::ContextArgs),
    /// Blast radius of a symbol, or of changes: `impact SYMBOL`, `impact A..B`, `impact A...B`,
    /// `impact --staged`, `impact` (uncommitted work).
    Impact(ops::impact::ImpactArgs),
    /// Definitions, imports and dependents of a file.
    ModuleSummary(ops::nav::ModuleArgs),
    /// Languages, frameworks, manifests, entry points and build/test/run commands.
    RepoOverview(ops::overview::OverviewArgs),
    /// Graph queries, counts and HTML export.
    Graph {
        #[command(subcommand)]
        what: GraphCmd,
    },
    /// Search only inside changed code (vs the base branch; staged and unstaged work included).
    SearchDiff(ops::changes::SearchDiffArgs),
    /// Alias of `graph query` (the MCP tool's name).
    #[command(hide = true)]
    GraphQuery(ops::graph::GraphArgs),
    /// Alias of `graph export` (the MCP tool's name).
    #[command(hide = true)]
    ExportGraph(ops::export::ExportArgs),
    /// Run the MCP server on stdio (for Claude Code, Cursor, Codex…).
    Serve(serve::ServeArgs),
    /// Keep the working-tree index fresh as files change.
    Watch,
    /// A local web interface: dashboard, search at any revision, symbols, graph explorer,
    /// impact, configuration (127.0.0.1 only, behind a secret link).
    Ui(serve::UiArgs),
    /// Sources beside the repository: add, remove, list.
    Source {
        #[command(subcommand)]
        what: SourceCmd,
    },
    /// The repositories of a workspace file (`--workspace FILE`): add, remove, list, status.
    Workspace {
        #[command(subcommand)]
        what: WorkspaceCmd,
    },
    /// Configured sources and their index state.
    ListSources,
    /// Index health: fresh / stale / degraded / not indexed, coverage, model, writers.
    GetRagStatus(ops::status::StatusArgs),
    /// Re-index a source now (`--force` also rebuilds its shards).
    UpdateSourceIndex(ops::status::UpdateArgs),
    /// Record feedback (with --outcome), or summarise what agents reported.
    Feedback(ops::feedback::FeedbackArgs),
    /// Share objects: export the segments revisions need, import a teammate's.
    Objects {
        #[command(subcommand)]
        what: ObjectsCmd,
    },
    /// Publish the index through the git remote: the segments REV's views need, as git objects
    /// on refs/lynx/objects (only what the remote lacks is sent; branches and tags untouched).
    Push(ops::remote::PushArgs),
    /// Bring the index published on the remote (refs/lynx/objects) into this store; every
    /// blob's objects are checked against the blob before use.
    Fetch(ops::remote::FetchArgs),
    /// Git hooks: pre-commit impact report, background indexing after commits and checkouts.
    Hooks {
        #[command(subcommand)]
        what: HooksCmd,
    },
    /// Diagnose: why a file is (not) indexed, runtime and model, store integrity, disk, locks.
    /// Exit 0 when nothing is broken (warnings included), 1 when a check failed.
    Doctor(ops::doctor::DoctorArgs),
    /// Measure retrieval quality and latency on questions mined from history.
    Evaluate {
        #[command(subcommand)]
        what: EvalCmd,
    },
    /// Set up an agent client for this repository: its MCP configuration (portable: no
    /// absolute paths), the rules file, and the index.
    Init(setup::InitArgs),
    /// Undo `init`: the `lynx` entries in client configurations and the rules sections.
    Remove(setup::RemoveArgs),
    /// Turn a LynxMCP config.json into Lynx settings (printed as TOML; --write merges them
    /// into .lynx/config.toml).
    MigrateConfig(setup::MigrateArgs),
    /// Print the MCP configuration for a client, as a valid file for that client.
    McpConfig(setup::McpConfigArgs),
    /// Write a rules section teaching an agent when to call which tool (CLAUDE.md, AGENTS.md,
    /// .cursor/rules/lynx.mdc, lynx.md).
    Rules(setup::RulesArgs),
    /// What is indexed for the working tree and HEAD, and the store's size.
    Status,
    /// Remove segments that no ref, recent reflog entry or working tree needs.
    Gc(ops::upkeep::GcArgs),
    /// Embedding models: pull, list, import, export.
    Model {
        #[command(subcommand)]
        what: ModelCmd,
    },
    /// Print the manual page (roff), or install it (and one page per command) where `man`, and so
    /// `git lynx --help`, find it.
    Man(setup::ManArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(setup::CompletionsArgs),
    /// Developer aids: the syntax tree or the chunks of a file.
    #[command(hide = true)]
    Debug {
        #[command(subcommand)]
        what: DebugCmd,
    },
}

impl Command {
    /// Whether the command changes things rather than answers a question: `--quiet` silences
    /// its report when it worked.
    fn changes_things(&self) -> bool {
        matches!(
            self,
            Command::Index(_)
                | Command::Gc(_)
                | Command::UpdateSourceIndex(_)
                | Command::Init(_)
                | Command::Remove(_)
                | Command::Rules(_)
                | Command::Source { .. }
                | Command::Workspace { .. }
                | Command::Objects { .. }
                | Command::Model { .. }
                | Command::Hooks { .. }
                | Command::Man(_)
                | Command::Push(_)
                | Command::Fetch(_)
        )
    }

    /// The operation's name in answers and errors: the agent operation's, else the command's
    /// own name with `_` for `-`.
    fn name(&self) -> &'static str {
        match self {
            Command::Search(_) => registry::Search::NAME,
            Command::DeepSearch(_) => registry::DeepSearch::NAME,
            Command::FindDefinition(_) => registry::FindDefinition::NAME,
            Command::FindUsages(_) => registry::FindUsages::NAME,
            Command::FindTestsFor(_) => registry::FindTestsFor::NAME,
            Command::FindSimilar(_) => registry::FindSimilar::NAME,
            Command::DescribeSymbol(_) => registry::DescribeSymbol::NAME,
            Command::Context(_) => registry::Context::NAME,
            Command::DataAccess(_) => registry::DataAccess::NAME,
            Command::Impact(_) => registry::Impact::NAME,
            Command::ModuleSummary(_) => registry::ModuleSummary::NAME,
            Command::RepoOverview(_) => registry::RepoOverview::NAME,
            Command::SearchDiff(_) => registry::SearchDiff::NAME,
            Command::GraphQuery(_) => registry::GraphQuery::NAME,
            Command::ExportGraph(_) => registry::ExportGraph::NAME,
            Command::ListSources => registry::ListSources::NAME,
            Command::GetRagStatus(_) => registry::GetRagStatus::NAME,
            Command::UpdateSourceIndex(_) => registry::UpdateSourceIndex::NAME,
            Command::Feedback(_) => registry::Feedback::NAME,
            Command::Graph { what } => what.name(),
            Command::Evaluate { what } => what.name(),
            Command::Index(_) => "index",
            Command::Serve(_) => "serve",
            Command::Watch => "watch",
            Command::Ui(_) => "ui",
            Command::Source { .. } => "source",
            Command::Workspace { .. } => "workspace",
            Command::McpConfig(_) => "mcp_config",
            Command::Init(_) => "init",
            Command::MigrateConfig(_) => "migrate_config",
            Command::Remove(_) => "remove",
            Command::Doctor(_) => "doctor",
            Command::Objects { .. } => "objects",
            Command::Hooks { .. } => "hooks",
            Command::Push(_) => "push",
            Command::Fetch(_) => "fetch",
            Command::Rules(_) => "rules",
            Command::Status => "status",
            Command::Gc(_) => "gc",
            Command::Model { .. } => "model",
            Command::Debug { .. } => "debug",
            Command::Man(_) => "man",
            Command::Completions(_) => "completions",
        }
    }
}

/// Entry point; returns the process exit code.
pub fn main() -> i32 {
    let mut cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => error::EXIT_USAGE,
            };
            // `--json` promises one object on stdout, a usage error included.
            if code != 0 && std::env::args().any(|a| a == "--json" || a == "--jsonl") {
                let msg = e.render().to_string();
                // The whole first paragraph: clap lists missing arguments on the lines after
                // "the following required arguments were not provided:".
                let first: Vec<&str> = msg
                    .lines()
                    .skip_while(|l| l.trim().is_empty())
                    .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage:"))
                    .map(str::trim)
                    .collect();
                let first = if first.is_empty() {
                    "usage error".to_string()
                } else {
                    first.join(" ").trim_start_matches("error: ").to_string()
                };
                println!(
                    "{}",
                    serde_json::json!({"ok": false, "operation": "usage", "error": first, "kind": error::Kind::Usage.name(), "usage": msg.trim_end()})
                );
                return code;
            }
            let _ = e.print();
            return code;
        }
    };
    // A workspace file named on the command line is relative to where it was typed.
    if cli.workspace.is_none() {
        cli.workspace = crate::env::path(crate::env::LYNX_WORKSPACE);
    }
    if let Some(w) = cli.workspace.take() {
        cli.workspace = Some(std::path::absolute(&w).unwrap_or(w));
    }
    // As `git -C`: everything after it, relative paths and git's own variables included, is
    // taken from that directory.
    if let Some(dir) = cli.dir.take()
        && let Err(e) = std::env::set_current_dir(&dir)
    {
        // `-C 3` after a grep habit: git's -C is a directory; context is --context.
        let numeric = dir.to_str().is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        let msg = if numeric {
            format!(
                "cannot change to {}: {e} (-C is git's \"run in <path>\"; for {} lines of context around each match use --context {})",
                dir.display(),
                dir.display(),
                dir.display()
            )
        } else {
            format!("cannot change to {}: {e}", dir.display())
        };
        if cli.json {
            println!("{}", serde_json::json!({"ok": false, "operation": cli.command.name(), "error": msg}));
        } else {
            eprintln!("error: {msg}");
        }
        return error::EXIT_USAGE;
    }
    init_logging(cli.verbose, cli.quiet, cli.color.stderr());
    // Outside any repository, a workspace's questions start in its first repository.
    if let Some(w) = &cli.workspace
        && !matches!(cli.command, Command::Workspace { .. })
        && crate::repo::Repo::discover(std::path::Path::new(".")).is_err()
        && let Ok(repos) = crate::sources::read_workspace(w)
        && let Some((_, first)) = repos.iter().find(|(_, p)| p.join(".git").exists())
    {
        let _ = std::env::set_current_dir(first);
    }
    // MCP answers keep repository-relative, uncoloured text whatever the terminal.
    if !matches!(cli.command, Command::Serve(_) | Command::Watch) {
        crate::present::init(!cli.json && !cli.jsonl && cli.color.stdout());
    }
    let op = cli.command.name();
    // `git lynx --help` is git's `man git-lynx`: on a fresh install the first command a person
    // runs puts the manual where man finds it. Only with a person at the terminal, so that
    // scripts, hooks and MCP clients never find files written or lines added behind their back.
    if !cli.quiet
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
        && !matches!(cli.command, Command::Man(_) | Command::Completions(_) | Command::Serve(_))
        && let Some(dir) = ops::setup::install_man_if_missing(&<Cli as clap::CommandFactory>::command())
    {
        eprintln!("lynx: installed the manual pages in {} (`git lynx --help` shows them)", dir.display());
    }
    // Long-running commands own stdout (serve: JSON-RPC only; ui: its link) and print no
    // answer; each of their answers says what was damaged while it was given.
    if matches!(cli.command, Command::Serve(_) | Command::Watch | Command::Ui(_)) {
        return match run(&cli) {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("error: {e:#}");
                error::exit_code(&e)
            }
        };
    }
    match run(&cli) {
        Ok(answer) => {
            // A quiet action says nothing when it worked (as git's -q); its exit code speaks.
            let action = cli.command.changes_things();
            if !cli.quiet || !action || cli.json || cli.jsonl {
                print_answer(&cli, &answer);
            }
            answer.exit
        }
        Err(e) => {
            if cli.json || cli.jsonl {
                println!("{}", ops::failure_json(op, &e));
            } else {
                eprintln!("error: {e:#}");
            }
            error::exit_code(&e)
        }
    }
}

pub fn init_logging(verbose: u8, quiet: bool, ansi: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (_, 0) => "warn",
        (_, 1) => "info",
        _ => "debug",
    };
    let filter = crate::env::get(crate::env::LYNX_LOG)
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(format!("{default},tantivy=warn,ort=warn")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .without_time()
        .try_init();
}

fn print_answer(cli: &Cli, answer: &Answer) {
    let mut out = std::io::stdout().lock();
    if cli.jsonl {
        for line in ops::json_lines(answer) {
            let _ = writeln!(out, "{line}");
        }
    } else if cli.json {
        let _ = writeln!(out, "{}", answer.json());
    } else {
        let _ = write!(out, "{}", crate::present::for_terminal(&answer.text));
    }
}

impl Cli {
    /// What the commands read of the global options.
    fn context(&self) -> Ctx {
        Ctx {
            dir: self.dir.clone(),
            json: self.json,
            jsonl: self.jsonl,
            quiet: self.quiet,
            model: self.model.clone(),
            no_dense: self.no_dense,
            workspace: self.workspace.clone(),
            downloads: matches!(self.command, Command::Index(_)),
        }
    }
}

fn run(cli: &Cli) -> Result<Answer> {
    let cx = &cli.context();
    let shell = || cx.shell();
    let tree = || <Cli as clap::CommandFactory>::command();
    match &cli.command {
        Command::Index(a) => upkeep::index(cx, a),
        Command::Search(a) if a.grep.on() => {
            let answer = ops::grep::run(&cx.engine()?, &a.grep_args()?)?;
            let none = answer.data.get("files").and_then(|f| f.as_array()).is_some_and(|f| f.is_empty());
            Ok(if a.grep.exit_code && none { answer.with_exit(error::EXIT_FAILURE) } else { answer })
        }
        Command::Search(a) => {
            a.grep.refuse_without_pattern()?;
            registry::Search::run(&shell(), a)
        }
        Command::DeepSearch(a) => registry::DeepSearch::run(&shell(), a),
        Command::FindDefinition(a) => registry::FindDefinition::run(&shell(), a),
        Command::FindUsages(a) => registry::FindUsages::run(&shell(), a),
        Command::FindTestsFor(a) => registry::FindTestsFor::run(&shell(), a),
        Command::FindSimilar(a) => registry::FindSimilar::run(&shell(), a),
        Command::DescribeSymbol(a) => registry::DescribeSymbol::run(&shell(), a),
        Command::DataAccess(a) => registry::DataAccess::run(&shell(), a),
        Command::Context(a) => registry::Context::run(&shell(), a),
        Command::Impact(a) => registry::Impact::run(&shell(), a),
        Command::ModuleSummary(a) => registry::ModuleSummary::run(&shell(), a),
        Command::RepoOverview(a) => registry::RepoOverview::run(&shell(), a),
        Command::SearchDiff(a) => registry::SearchDiff::run(&shell(), a),
        Command::GraphQuery(a) => registry::GraphQuery::run(&shell(), a),
        Command::ExportGraph(a) => registry::ExportGraph::run(&shell(), a),
        Command::ListSources => registry::ListSources::run(&shell(), &ops::status::ListArgs::default()),
        Command::GetRagStatus(a) => registry::GetRagStatus::run(&shell(), a),
        Command::UpdateSourceIndex(a) => registry::UpdateSourceIndex::run(&shell(), a),
        // Without an outcome the command line reads the feedback back instead of recording it.
        Command::Feedback(f) if f.outcome.is_none() => ops::feedback::summary(&ops::feedback::path(&cx.workspace()?)),
        Command::Feedback(f) => registry::Feedback::run(&shell(), f),
        Command::Graph { what } => commands::graph::run(cx, what),
        Command::Serve(a) => serve::serve(cx, a),
        Command::Ui(a) => serve::ui(cx, a),
        Command::Watch => serve::watch(cx),
        Command::Source { what } => commands::sources::source_cmd(cx, what),
        Command::Workspace { what } => commands::sources::workspace_cmd(cx, what),
        Command::Objects { what } => share::objects(cx, what),
        Command::Push(a) => share::push(cx, a),
        Command::Fetch(a) => share::fetch(cx, a),
        Command::McpConfig(a) => setup::mcp_config(cx, a),
        Command::Init(a) => setup::init(cx, a),
        Command::MigrateConfig(a) => setup::migrate_config(cx, a),
        Command::Remove(a) => setup::remove(cx, a),
        Command::Rules(a) => setup::rules(cx, a),
        Command::Hooks { what } => setup::hooks(cx, what),
        Command::Man(a) => setup::man(a, tree()),
        Command::Completions(a) => setup::completions(a, tree()),
        Command::Evaluate { what } => commands::evaluate::run(cx, what),
        Command::Doctor(a) => upkeep::doctor(cx, a),
        Command::Status => upkeep::status(cx),
        Command::Gc(a) => upkeep::gc(cx, a),
        Command::Model { what } => commands::model::run(cx, what),
        Command::Debug { what } => upkeep::debug(what),
    }
}
