//! The command line: `git lynx <command>`. Parses arguments, opens the engine, runs one
//! operation and prints its text or its JSON envelope.

use crate::engine::Engine;
use crate::error;
use crate::ops::registry::{self, Operation, Scope};
use crate::ops::{self, Answer};
use crate::progress::Progress;
use crate::workspace::Workspace;
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
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
    Serve(ServeCmd),
    /// Keep the working-tree index fresh as files change.
    Watch,
    /// A local web interface: dashboard, search at any revision, symbols, graph explorer,
    /// impact, configuration (127.0.0.1 only, behind a secret link).
    Ui {
        /// Port to listen on (default: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Open the link in the default browser.
        #[arg(long)]
        open: bool,
        /// Allow actions that write (feedback); reading is all it does otherwise.
        #[arg(long)]
        allow_write: bool,
    },
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
    Push {
        /// The remote (name or URL).
        #[arg(default_value = "origin")]
        remote: String,
        /// Upload to a shared object store instead (s3://bucket/prefix, file:///dir): the
        /// segments it lacks, then its catalog shards. Without URL: LYNX_OBJECTS_URL, else
        /// store.objects_url of your own configuration.
        #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "", conflicts_with = "prune")]
        objects: Option<String>,
        /// Revisions whose index to publish (repeatable; default: HEAD).
        #[arg(long = "rev", value_name = "REV")]
        revs: Vec<String>,
        /// Replace what the remote holds with these revisions' segments only (history dropped,
        /// so the remote can collect the rest).
        #[arg(long)]
        prune: bool,
    },
    /// Bring the index published on the remote (refs/lynx/objects) into this store; every
    /// blob's objects are checked against the blob before use.
    Fetch {
        /// The remote (name or URL).
        #[arg(default_value = "origin")]
        remote: String,
        /// Use the objects as they are (only for a remote you fully trust).
        #[arg(long)]
        trust: bool,
    },
    /// Git hooks: pre-commit impact report, background indexing after commits and checkouts.
    Hooks {
        #[command(subcommand)]
        what: HooksCmd,
    },
    /// Diagnose: why a file is (not) indexed, runtime and model, store integrity, disk, locks.
    /// Exit 0 when nothing is broken (warnings included), 1 when a check failed.
    Doctor {
        /// Exit 1 on warnings too (being offline, a missing model, an ignored setting).
        #[arg(long)]
        strict: bool,
        /// Explain this file.
        #[arg(long)]
        path: Option<String>,
        /// Quarantine damaged segments, rebuild catalogs, remove damaged shards.
        #[arg(long)]
        repair: bool,
        /// Also check every object of the working tree's blobs by processing the blobs again.
        #[arg(long)]
        verify: bool,
    },
    /// Measure retrieval quality and latency on questions mined from history.
    Evaluate {
        #[command(subcommand)]
        what: EvalCmd,
    },
    /// Set up an agent client for this repository: its MCP configuration (portable: no
    /// absolute paths), the rules file, and the index.
    Init {
        /// claude | cursor | codex (default: cursor when `.cursor/` exists, else claude)
        #[arg(long)]
        client: Option<String>,
        /// Do not ask; Lynx never prompts when stdin is not a terminal either.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Write the configuration and rules but do not index now.
        #[arg(long)]
        no_index: bool,
    },
    /// Undo `init`: the `lynx` entries in client configurations and the rules sections.
    Remove {
        /// Also delete this repository's index (`.lynx/`).
        #[arg(long)]
        store: bool,
    },
    /// Turn a LynxMCP config.json into Lynx settings (printed as TOML; --write merges them
    /// into .lynx/config.toml).
    MigrateConfig {
        /// The LynxMCP config.json (default: RAG_CONFIG_PATH, else ./config.json).
        file: Option<PathBuf>,
        /// Merge into .lynx/config.toml instead of printing.
        #[arg(long)]
        write: bool,
    },
    /// Print the MCP configuration for a client, as a valid file for that client.
    McpConfig {
        /// claude | cursor | codex | generic
        #[arg(default_value = "generic")]
        client: String,
    },
    /// Write a rules section teaching an agent when to call which tool (CLAUDE.md, AGENTS.md,
    /// .cursor/rules/lynx.mdc, lynx.md).
    Rules {
        /// claude | agents | cursor | lynx
        #[arg(default_value = "claude")]
        target: String,
        /// Print instead of writing the file.
        #[arg(long)]
        print: bool,
    },
    /// What is indexed for the working tree and HEAD, and the store's size.
    Status,
    /// Remove segments that no ref, recent reflog entry or working tree needs.
    Gc(GcArgs),
    /// Embedding models: pull, list, import, export.
    Model {
        #[command(subcommand)]
        what: ModelCmd,
    },
    /// Print the manual page (roff), or install it (and one page per command) where `man`, and so
    /// `git lynx --help`, find it.
    Man {
        /// Write git-lynx.1 and git-lynx-<command>.1 instead of printing.
        #[arg(long)]
        install: bool,
        /// Where to install (default: share/man/man1 beside the PATH directory holding
        /// git-lynx, which man-db searches without MANPATH, e.g. ~/.cargo/share/man for
        /// ~/.cargo/bin; else ~/.local/share/man/man1). The first command run at a terminal
        /// installs them there when missing.
        #[arg(long = "dir", id = "man_dir", value_name = "DIR", requires = "install")]
        man_dir: Option<PathBuf>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Developer aids: the syntax tree or the chunks of a file.
    #[command(hide = true)]
    Debug {
        #[command(subcommand)]
        what: DebugCmd,
    },
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Revisions to index (any git revision); default: the working tree.
    #[arg(long = "rev", value_name = "REV")]
    pub revs: Vec<String>,
}

#[derive(Args, Debug)]
pub struct GcArgs {
    /// Only report what would be removed.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep objects that reflog entries newer than this many days need.
    #[arg(long, default_value_t = 30)]
    pub reflog_days: u64,
}

#[derive(Args, Debug, Clone)]
pub struct ViewArg {
    /// Revision to answer from (default: the working tree).
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
}

#[derive(Args, Debug)]
pub struct ServeCmd {
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

#[derive(Subcommand, Debug)]
pub enum WorkspaceCmd {
    /// Add a repository (the file is created if needed).
    Add(ops::workspace::AddArgs),
    /// Remove the repository named NAME.
    Remove {
        /// The repository's name in the workspace.
        name: String,
    },
    /// The listed repositories and whether each exists.
    List,
    /// The repositories as a server opens them: which answer, which are skipped and why.
    Status,
}

#[derive(Subcommand, Debug)]
pub enum SourceCmd {
    /// Add a folder or repository, a documentation site (`--type webdoc`) or PDFs (`--type pdf`)
    /// as a source; a site is crawled and PDFs are read at once (`update-source-index` again later).
    Add(ops::source::AddArgs),
    /// Remove a source from .lynx/config.toml.
    Remove {
        /// The source's name.
        name: String,
    },
    /// List sources.
    List,
}

#[derive(Subcommand, Debug)]
pub enum ObjectsCmd {
    /// Write the segments of these revisions (default HEAD) to a directory (usable as an
    /// alternate) or a single `.lynxpack` file.
    Export {
        /// Revisions whose views' segments to export (default: HEAD).
        revs: Vec<String>,
        /// A directory, or a file ending in `.lynxpack`.
        #[arg(long)]
        to: PathBuf,
    },
    /// Import a directory or `.lynxpack`: hashes verified, then each blob's objects checked
    /// against the blob in this repository before they are used (docs/SECURITY.md).
    Import {
        /// The directory or `.lynxpack` file to import.
        from: PathBuf,
        /// Use the objects as they are (only for packs you made or fully trust).
        #[arg(long)]
        trust: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum EvalCmd {
    /// Mine questions from commits: subject (and subject + body) → the source files modified.
    Mine {
        /// Commits to mine: `A..B`, or a revision (its history).
        #[arg(long, default_value = "HEAD")]
        rev_range: String,
        /// Commits to keep at most.
        #[arg(long, default_value_t = 100)]
        max: usize,
        /// Skip commits modifying more source files than this.
        #[arg(long, default_value_t = 4)]
        max_files: usize,
        /// Write the questions here (JSON with the rules). Default: print that file on stdout
        /// (`evaluate mine > q.json`; the summary goes to stderr); with --json, the usual
        /// envelope, which `evaluate run` reads too.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Precision and recall of data-access facts against a hand-checked table → symbol set
    /// (docs/eval/data/).
    DataAccess {
        /// A truth file for this repository (table, file, symbol, access edges).
        truth: PathBuf,
        /// Answer at this revision instead of the truth file's commit.
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
        /// List every wrong and missed edge.
        #[arg(long)]
        details: bool,
    },
    /// Precision and recall of the code graph against hand-checked edges (docs/eval/graph/),
    /// per edge kind and confidence level.
    Graph {
        /// A truth file for this repository (focus symbols, their call edges, bases, imports).
        truth: PathBuf,
        /// Answer at this revision instead of the truth file's commit.
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
        /// List every wrong and missed edge.
        #[arg(long)]
        details: bool,
    },
    /// Ask every question at its revision and report Recall@k, MRR, NDCG, latency.
    Run(ops::evaluate::RunArgs),
}

#[derive(Subcommand, Debug)]
pub enum HooksCmd {
    /// Install the hooks (existing hooks are kept and run first).
    Install,
    /// Remove the hooks (restoring the ones they chained).
    Uninstall,
}

#[derive(Args, Debug)]
pub struct ViewOnly {
    #[command(flatten)]
    pub view: ViewArg,
}

#[derive(Subcommand, Debug)]
pub enum GraphCmd {
    /// callers | callees | subclasses | superclasses | imports | neighbors | shortest_path | overview | surprising_connections | status
    Query {
        /// callers, callees, subclasses, superclasses, imports, neighbors, shortest_path,
        /// overview, surprising_connections (or --op).
        #[arg(
            value_name = "OP",
            required_unless_present = "op",
            conflicts_with = "op",
            value_enum,
            hide_possible_values = true
        )]
        operation: Option<ops::graph::GraphOp>,
        /// The symbol (or --symbol).
        #[arg(value_name = "SYMBOL", conflicts_with = "symbol")]
        name: Option<String>,
        #[command(flatten)]
        args: ops::graph::GraphArgs,
    },
    /// Node and edge counts by language, kind and relation.
    Status(ViewOnly),
    /// Import a SCIP index (scip-python, scip-typescript, rust-analyzer, scip-java, scip-go…)
    /// made for this checkout: its files' calls, imports and bases become `precise`.
    ImportScip {
        /// The index file (`index.scip`).
        index: PathBuf,
        /// The revision the index was made from (default: the working tree).
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
    },
    /// Forget every imported SCIP index (the graph is heuristic again).
    ClearScip,
    /// Write an offline HTML view of a symbol's blast radius or a module's hub.
    Export(ops::export::ExportArgs),
}

#[derive(Subcommand, Debug)]
pub enum ModelCmd {
    /// Download a model (default: the configured one) into the HuggingFace cache.
    Pull {
        /// A HuggingFace repo id (`owner/name`).
        name: Option<String>,
    },
    /// Models in the HuggingFace cache.
    List,
    /// Import a model folder or archive (tar, tar.gz, tar.zst) for offline use.
    Import {
        /// A model folder or archive.
        path: PathBuf,
        /// Repo id to file it under (default: the archive's manifest).
        #[arg(long)]
        name: Option<String>,
    },
    /// Distil a static model from a local transformer (the model2vec recipe), optionally with
    /// this repository's identifier words added to its vocabulary.
    Distill {
        /// The transformer: a repo id in the HuggingFace cache, a folder or an `.onnx` file.
        from: String,
        /// The folder to write (must not exist).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Dimensions kept by PCA.
        #[arg(long, default_value_t = 256)]
        dims: usize,
        /// How the table is stored: int8 is half of f16's size (a scale per row).
        #[arg(long, value_enum, default_value_t = crate::embed::distill::TableType::F16)]
        dtype: crate::embed::distill::TableType,
        /// Keep only tokens written in ASCII (a smaller model for code).
        #[arg(long)]
        ascii_only: bool,
        /// Add the N most frequent identifier words of HEAD's source files.
        #[arg(long, value_name = "N", default_value_t = 0)]
        repo_words: usize,
        /// Add the words of this file (one per line).
        #[arg(long, value_name = "FILE")]
        words: Option<PathBuf>,
    },
    /// Write a model to an archive for an air-gapped machine (.tar, .tar.gz or .tar.zst).
    Export {
        /// The model: a repo id in the HuggingFace cache, or a folder.
        name: String,
        /// The archive to write (also --to, as `objects export`).
        #[arg(value_name = "FILE", required_unless_present = "to", conflicts_with = "to")]
        file: Option<PathBuf>,
        /// The archive to write.
        #[arg(long, value_name = "FILE")]
        to: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum DebugCmd {
    /// Print the tree-sitter syntax tree of a file.
    Parse {
        file: PathBuf,
        #[arg(long)]
        lang: Option<String>,
    },
    /// Print the chunks of a file.
    Chunks {
        file: PathBuf,
        #[arg(long)]
        lang: Option<String>,
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
                | Command::Init { .. }
                | Command::Remove { .. }
                | Command::Rules { .. }
                | Command::Source { .. }
                | Command::Workspace { .. }
                | Command::Objects { .. }
                | Command::Model { .. }
                | Command::Hooks { .. }
                | Command::Man { .. }
                | Command::Push { .. }
                | Command::Fetch { .. }
        )
    }

    fn name(&self) -> &'static str {
        match self {
            Command::Index(_) => "index",
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
            Command::Graph { what: GraphCmd::Export { .. } } => registry::ExportGraph::NAME,
            Command::Graph { what: GraphCmd::ImportScip { .. } } => "import_scip",
            Command::Graph { what: GraphCmd::ClearScip } => "clear_scip",
            Command::Graph { .. } => registry::GraphQuery::NAME,
            Command::SearchDiff(_) => registry::SearchDiff::NAME,
            Command::GraphQuery(_) => registry::GraphQuery::NAME,
            Command::ExportGraph(_) => registry::ExportGraph::NAME,
            Command::Serve(_) => "serve",
            Command::Watch => "watch",
            Command::Ui { .. } => "ui",
            Command::Source { .. } => "source",
            Command::Workspace { .. } => "workspace",
            Command::ListSources => registry::ListSources::NAME,
            Command::GetRagStatus(_) => registry::GetRagStatus::NAME,
            Command::UpdateSourceIndex(_) => registry::UpdateSourceIndex::NAME,
            Command::Feedback(_) => registry::Feedback::NAME,
            Command::McpConfig { .. } => "mcp_config",
            Command::Init { .. } => "init",
            Command::MigrateConfig { .. } => "migrate_config",
            Command::Remove { .. } => "remove",
            Command::Evaluate { what: EvalCmd::Mine { .. } } => "evaluate_mine",
            Command::Evaluate { what: EvalCmd::Graph { .. } } => "evaluate_graph",
            Command::Evaluate { what: EvalCmd::DataAccess { .. } } => "evaluate_data_access",
            Command::Evaluate { .. } => "evaluate_run",
            Command::Doctor { .. } => "doctor",
            Command::Objects { .. } => "objects",
            Command::Hooks { .. } => "hooks",
            Command::Push { .. } => "push",
            Command::Fetch { .. } => "fetch",
            Command::Rules { .. } => "rules",
            Command::Status => "status",
            Command::Gc(_) => "gc",
            Command::Model { .. } => "model",
            Command::Debug { .. } => "debug",
            Command::Man { .. } => "man",
            Command::Completions { .. } => "completions",
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
        && !matches!(cli.command, Command::Man { .. } | Command::Completions { .. } | Command::Serve(_))
        && let Some(dir) = ops::setup::install_man_if_missing(&<Cli as clap::CommandFactory>::command())
    {
        eprintln!("lynx: installed the manual pages in {} (`git lynx --help` shows them)", dir.display());
    }
    // Long-running commands own stdout (serve: JSON-RPC only; ui: its link) and print no
    // answer; each of their answers says what was damaged while it was given.
    if matches!(cli.command, Command::Serve(_) | Command::Watch | Command::Ui { .. }) {
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

/// The repository the command runs in; text answers print paths relative to where it started.
fn workspace(cli: &Cli) -> Result<Workspace> {
    let ws = Workspace::open_from_env(cli.dir.as_deref().unwrap_or(std::path::Path::new(".")))?;
    crate::present::set_worktree(ws.repo.workdir.as_deref());
    Ok(ws)
}

fn engine(cli: &Cli) -> Result<Engine> {
    let ws = workspace(cli)?;
    let downloads = matches!(cli.command, Command::Index(_));
    let recorded = crate::engine::ModelChoice::recorded(&ws.store.root);
    let model = crate::engine::ModelChoice::from(cli.model.as_deref(), cli.no_dense, &ws.config, downloads, recorded);
    Ok(Engine::new(ws, Progress::new(!cli.quiet && !cli.json && !cli.jsonl), model))
}

fn run(cli: &Cli) -> Result<Answer> {
    match &cli.command {
        Command::Index(a) => {
            crate::shard::release_read_pages();
            if cli.workspace.is_some() {
                return ops::index::run_workspace(&sources(cli)?, &a.revs);
            }
            ops::index::run(&engine(cli)?, &a.revs)
        }
        Command::Search(a) if a.grep.on() => {
            let answer = ops::grep::run(&engine(cli)?, &a.grep_args()?)?;
            let none = answer.data.get("files").and_then(|f| f.as_array()).is_some_and(|f| f.is_empty());
            Ok(if a.grep.exit_code && none { answer.with_exit(error::EXIT_FAILURE) } else { answer })
        }
        Command::Search(a) => {
            a.grep.refuse_without_pattern()?;
            registry::Search::run(&Shell::new(cli), a)
        }
        Command::DeepSearch(a) => registry::DeepSearch::run(&Shell::new(cli), a),
        Command::FindDefinition(a) => registry::FindDefinition::run(&Shell::new(cli), a),
        Command::FindUsages(a) => registry::FindUsages::run(&Shell::new(cli), a),
        Command::FindTestsFor(a) => registry::FindTestsFor::run(&Shell::new(cli), a),
        Command::DescribeSymbol(a) => registry::DescribeSymbol::run(&Shell::new(cli), a),
        Command::DataAccess(a) => registry::DataAccess::run(&Shell::new(cli), a),
        Command::Context(a) => registry::Context::run(&Shell::new(cli), a),
        Command::Impact(a) => registry::Impact::run(&Shell::new(cli), a),
        Command::SearchDiff(a) => registry::SearchDiff::run(&Shell::new(cli), a),
        Command::GraphQuery(a) => registry::GraphQuery::run(&Shell::new(cli), a),
        Command::ExportGraph(a) => registry::ExportGraph::run(&Shell::new(cli), a),
        #[cfg(not(feature = "mcp"))]
        Command::Serve(_) => Err(crate::error::without("mcp", "the MCP server")),
        #[cfg(feature = "mcp")]
        Command::Serve(a) => {
            let opts = crate::mcp::ServeOptions {
                dir: cli.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
                profile: a.profile,
                model: cli.model.clone(),
                no_dense: cli.no_dense,
                lynxmcp_config: a.config.clone(),
                workspace: cli.workspace.clone(),
                watch: !a.no_watch,
            };
            crate::mcp::serve(opts)?;
            Ok(Answer::new("serve", None, serde_json::json!({}), String::new()))
        }
        #[cfg(not(feature = "ui"))]
        Command::Ui { .. } => Err(crate::error::without("ui", "the web UI")),
        #[cfg(feature = "ui")]
        Command::Ui { port, open, allow_write } => {
            let opts = crate::ui::Options { port: *port, open: *open, allow_write: *allow_write };
            let json = cli.json;
            crate::ui::serve(
                || sources(cli),
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
            Ok(Answer::new("ui", None, serde_json::json!({}), String::new()))
        }
        Command::Watch => {
            let e = engine(cli)?;
            let debounce = std::time::Duration::from_millis(e.ws.config.watch.debounce_ms);
            crate::watch::run_cli(&e, debounce, cli.json)?;
            Ok(Answer::new("watch", None, serde_json::json!({}), String::new()))
        }
        Command::Source { what } => source_cmd(cli, what),
        Command::Workspace { what } => workspace_cmd(cli, what),
        Command::ListSources => registry::ListSources::run(&Shell::new(cli), &ops::status::ListArgs::default()),
        Command::GetRagStatus(a) => registry::GetRagStatus::run(&Shell::new(cli), a),
        Command::UpdateSourceIndex(a) => registry::UpdateSourceIndex::run(&Shell::new(cli), a),
        // Without an outcome the command line reads the feedback back instead of recording it.
        Command::Feedback(f) if f.outcome.is_none() => ops::feedback::summary(&ops::feedback::path(&workspace(cli)?)),
        Command::Feedback(f) => registry::Feedback::run(&Shell::new(cli), f),
        Command::McpConfig { client } => crate::integrate::mcp_config(cli.dir.as_deref(), client),
        Command::Init { client, yes: _, no_index } => {
            crate::integrate::init_answer(cli.dir.as_deref(), client.as_deref(), || {
                if *no_index { Ok(None) } else { engine(cli).map(Some) }
            })
        }
        Command::MigrateConfig { file, write } => {
            let file = file
                .clone()
                .or_else(|| crate::env::path(crate::env::RAG_CONFIG_PATH))
                .unwrap_or_else(|| PathBuf::from("config.json"));
            ops::setup::migrate_config(&file, if *write { Some(workspace(cli)?) } else { None }.as_ref())
        }
        Command::Remove { store } => {
            let store_dir = if *store { Some(workspace(cli)?.store.root.clone()) } else { None };
            crate::integrate::remove(cli.dir.as_deref(), store_dir.as_deref())
        }
        Command::Evaluate { what } => evaluate(cli, what),
        Command::Doctor { strict, path, repair, verify } => {
            ops::doctor::run(&engine(cli)?, path.as_deref(), *repair, *verify, *strict)
        }
        Command::Objects { what } => match what {
            ObjectsCmd::Export { revs, to } => ops::objects::export(&engine(cli)?, revs, to),
            ObjectsCmd::Import { from, trust } => ops::objects::import(&engine(cli)?, from, *trust),
        },
        Command::Hooks { what } => {
            let ws = workspace(cli)?;
            match what {
                HooksCmd::Install => crate::hooks::install(&ws),
                HooksCmd::Uninstall => crate::hooks::uninstall(&ws),
            }
        }
        Command::Push { objects: Some(url), revs, .. } => {
            ops::remote::push_objects(&engine(cli)?, Some(url.as_str()).filter(|u| !u.is_empty()), revs)
        }
        Command::Push { remote, revs, prune, .. } => ops::remote::push(&engine(cli)?, remote, revs, *prune),
        Command::Fetch { remote, trust } => ops::remote::fetch(&engine(cli)?, remote, *trust),
        Command::Rules { target, print } => crate::integrate::rules(cli.dir.as_deref(), target, *print),
        Command::ModuleSummary(a) => registry::ModuleSummary::run(&Shell::new(cli), a),
        Command::RepoOverview(a) => registry::RepoOverview::run(&Shell::new(cli), a),
        Command::FindSimilar(a) => registry::FindSimilar::run(&Shell::new(cli), a),
        Command::Graph { what } => match what {
            GraphCmd::Query { operation, name, args } => {
                let args = ops::graph::GraphArgs {
                    op: args.op.or(*operation),
                    symbol: args.symbol.clone().or_else(|| name.clone()),
                    ..args.clone()
                };
                registry::GraphQuery::run(&Shell::new(cli), &args)
            }
            GraphCmd::Status(v) => {
                let args = ops::graph::GraphArgs {
                    at: ops::args::Rev { rev: v.view.rev.clone() },
                    ..ops::graph::GraphArgs::of(ops::graph::GraphOp::Status)
                };
                ops::graph::run(&engine(cli)?, &args)
            }
            GraphCmd::ImportScip { index, rev } => ops::graph::import_scip(&engine(cli)?, index, rev.as_deref()),
            GraphCmd::ClearScip => ops::graph::clear_scip(&engine(cli)?),
            GraphCmd::Export(a) => registry::ExportGraph::run(&Shell::new(cli), a),
        },
        Command::Status => ops::status::run(&engine(cli)?),
        Command::Gc(a) => ops::upkeep::gc(&engine(cli)?, a.dry_run, a.reflog_days),
        Command::Debug { what } => match what {
            DebugCmd::Parse { file, lang } => ops::debug::parse(file, lang.as_deref()),
            DebugCmd::Chunks { file, lang } => ops::debug::chunks(file, lang.as_deref()),
        },
        Command::Man { install, man_dir } => {
            ops::setup::man(<Cli as clap::CommandFactory>::command(), *install, man_dir.as_deref())
        }
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            let mut cmd = <Cli as clap::CommandFactory>::command().bin_name("git-lynx");
            clap_complete::generate(*shell, &mut cmd, "git-lynx", &mut buf);
            let mut script = String::from_utf8_lossy(&buf).into_owned();
            if *shell == clap_complete::Shell::Bash {
                // The subcommands keep the `git lynx` bin name the help text shows; name their
                // branches as the top-level function does.
                script = script.replace("git__subcmd__lynx", "git__lynx");
                // git's own completion calls `_git_lynx` for `git lynx …`: hand it the words as
                // if `git-lynx` had been typed.
                script.push_str(BASH_GIT_SHIM);
            }
            Ok(Answer::new("completions", None, serde_json::json!({"shell": shell.to_string()}), script))
        }
        Command::Model { what } => {
            let configured =
                || -> String { ops::model::configured_name(cli.model.as_deref(), workspace(cli).ok().as_ref()) };
            match what {
                ModelCmd::Pull { name } => {
                    ops::model::pull(&name.clone().unwrap_or_else(configured), !cli.quiet && !cli.json)
                }
                ModelCmd::List => ops::model::list(&configured()),
                ModelCmd::Import { path, name } => ops::model::import(path, name.as_deref()),
                ModelCmd::Distill { from, out, dims, dtype, ascii_only, repo_words, words } => {
                    let engine = if *repo_words > 0 { Some(engine(cli)?) } else { None };
                    let args = ops::model::DistillArgs {
                        from,
                        out,
                        shape: crate::embed::distill::DistillOptions {
                            dims: *dims,
                            table: *dtype,
                            ascii_only: *ascii_only,
                        },
                        words_file: words.as_deref(),
                        repo_words: *repo_words,
                        threads: engine.as_ref().map_or(0, |e| e.ws.config.model.threads),
                        ort_setting: engine.as_ref().and_then(|e| e.ws.config.model.ort_dylib.as_deref()),
                    };
                    ops::model::distill(&args, engine.as_ref().map(|e| &e.ws), !cli.quiet && !cli.json)
                }
                ModelCmd::Export { name, file, to } => {
                    ops::model::export(name, file.as_ref().or(to.as_ref()).expect("clap requires FILE or --to"))
                }
            }
        }
    }
}

fn evaluate(cli: &Cli, what: &EvalCmd) -> Result<Answer> {
    match what {
        EvalCmd::Mine { rev_range, max, max_files, out } => {
            let opts =
                crate::ops::evaluate::mine::MineOptions { range: rev_range.clone(), max: *max, max_files: *max_files };
            let (answer, summary) = ops::evaluate::mine(&workspace(cli)?, &opts, out.as_deref())?;
            // Stdout is the question file; what was mined and skipped is for the person.
            if !cli.quiet && !cli.json && !cli.jsonl {
                eprint!("{summary}");
            }
            Ok(answer)
        }
        EvalCmd::DataAccess { truth, rev, details } => {
            ops::evaluate::data_access(&engine(cli)?, truth, rev.as_deref(), *details)
        }
        EvalCmd::Graph { truth, rev, details } => ops::evaluate::graph(&engine(cli)?, truth, rev.as_deref(), *details),
        EvalCmd::Run(a) => ops::evaluate::run(|| engine(cli), a),
    }
}

/// The command line's scope: the repository, and the configured sources opened only when a
/// command names one (or `ALL`).
struct Shell<'a> {
    cli: &'a Cli,
    repo: std::cell::OnceCell<Engine>,
    sources: std::cell::OnceCell<crate::sources::Sources>,
}

impl<'a> Shell<'a> {
    fn new(cli: &'a Cli) -> Shell<'a> {
        Shell { cli, repo: Default::default(), sources: Default::default() }
    }
}

impl Scope for Shell<'_> {
    fn repository(&self) -> Result<&Engine> {
        if self.cli.workspace.is_some() {
            return Ok(&self.sources()?.main().engine);
        }
        if self.repo.get().is_none() {
            let _ = self.repo.set(engine(self.cli)?);
        }
        Ok(self.repo.get().expect("set above"))
    }
    fn sources(&self) -> Result<&crate::sources::Sources> {
        if self.sources.get().is_none() {
            let _ = self.sources.set(sources(self.cli)?);
        }
        Ok(self.sources.get().expect("set above"))
    }
    fn all_by_default(&self) -> bool {
        self.cli.workspace.is_some()
    }
    fn confined(&self) -> bool {
        false
    }
}

fn sources(cli: &Cli) -> Result<crate::sources::Sources> {
    if let Some(file) = &cli.workspace {
        let progress = Progress::new(!cli.quiet && !cli.json && !cli.jsonl);
        let downloads = matches!(cli.command, Command::Index(_));
        let choose = |ws: &Workspace| {
            let recorded = crate::engine::ModelChoice::recorded(&ws.store.root);
            crate::engine::ModelChoice::from(cli.model.as_deref(), cli.no_dense, &ws.config, downloads, recorded)
        };
        return crate::sources::Sources::open_workspace(file, &progress, &choose);
    }
    let e = std::sync::Arc::new(engine(cli)?);
    let progress = e.progress.clone();
    crate::sources::Sources::open(e, crate::env::path(crate::env::RAG_CONFIG_PATH).as_deref(), &progress)
}

fn workspace_cmd(cli: &Cli, what: &WorkspaceCmd) -> Result<Answer> {
    let Some(file) = &cli.workspace else {
        return Err(ops::workspace::WorkspaceError::NoFile {}.into());
    };
    match what {
        WorkspaceCmd::Add(a) => ops::workspace::add(file, a),
        WorkspaceCmd::Remove { name } => ops::workspace::remove(file, name),
        WorkspaceCmd::List => ops::workspace::list(file, None),
        WorkspaceCmd::Status => ops::workspace::list(file, Some(&sources(cli)?)),
    }
}

fn source_cmd(cli: &Cli, what: &SourceCmd) -> Result<Answer> {
    match what {
        SourceCmd::Add(a) => ops::source::add(&workspace(cli)?, a.config(), (!a.no_fetch).then_some(|| sources(cli))),
        SourceCmd::Remove { name } => ops::source::remove(&workspace(cli)?, name),
        SourceCmd::List => ops::status::list_sources(&sources(cli)?),
    }
}

const BASH_GIT_SHIM: &str = r#"
_git_lynx() {
    local -a COMP_WORDS=(git-lynx "${COMP_WORDS[@]:2}")
    local COMP_CWORD=$((COMP_CWORD - 1))
    _git__lynx git-lynx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;
