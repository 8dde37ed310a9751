//! The operations an agent can ask for, each declared once: its name, its argument type, the
//! smallest tool profile that offers it, whether it writes, and how it runs over the sources.
//! The command line dispatches its subcommands to these, and MCP builds its tool list and
//! answers its calls from them, so a name, a profile or the rule for which sources are asked
//! cannot differ between the surfaces.

use super::Answer;
use super::args::{parse, required};
use crate::config::ToolProfile;
use crate::engine::Engine;
use crate::sources::Sources;
use anyhow::Result;
use serde_json::{Map, Value};

/// Where an operation runs: the repository and the sources configured beside it, as one
/// surface opens them.
pub trait Scope {
    /// The repository's own engine.
    fn repository(&self) -> Result<&Engine>;
    /// Every configured source, the repository first.
    fn sources(&self) -> Result<&Sources>;
    /// Whether a question that names no source goes to every source (an agent's call) or to
    /// the repository alone (the command line, where `--source ALL` asks them all).
    fn all_by_default(&self) -> bool;
    /// Whether files the operation writes must stay inside the repository (an agent's call:
    /// it must not write anywhere else through the server).
    fn confined(&self) -> bool;
}

impl dyn Scope + '_ {
    /// Runs `f` on the named source, on each source (`ALL`), or with none named on the
    /// surface's default; answers of several sources are fanned out under their names.
    pub fn fan_out(&self, name: Option<&str>, f: impl Fn(&Engine) -> Result<Answer>) -> Result<Answer> {
        match name {
            None if !self.all_by_default() => f(self.repository()?),
            _ => {
                let sources = self.sources()?;
                let mut answer = super::over_sources(&sources.select(name)?, f)?;
                if let Some(note) = sources.missing_note() {
                    answer.text.push_str(&note);
                }
                Ok(answer)
            }
        }
    }

    /// The named source's engine, else the repository's.
    pub fn one(&self, name: Option<&str>) -> Result<&Engine> {
        match name {
            None => self.repository(),
            Some(n) => Ok(&self.sources()?.get(n)?.engine),
        }
    }
}

/// One operation: its argument type is its command line options (clap), its MCP arguments
/// (serde) and its MCP input schema (schemars).
pub trait Operation {
    /// The MCP tool's name, and the operation's in answers and logs.
    const NAME: &'static str;
    /// The smallest MCP tool profile that offers it.
    const PROFILE: ToolProfile;
    /// Whether it writes files (a committed configuration cannot give such a tool to an agent).
    const WRITES: bool = false;
    type Args: serde::de::DeserializeOwned + schemars::JsonSchema;
    fn run(at: &dyn Scope, args: &Self::Args) -> Result<Answer>;
}

/// Reads an MCP call's arguments (already in this program's names) as `O`'s and runs it.
pub fn call<O: Operation>(at: &dyn Scope, args: &Map<String, Value>) -> Result<Answer> {
    O::run(at, &parse::<O::Args>(args)?)
}

macro_rules! operation {
    ($(#[$doc:meta])* $ty:ident: $name:literal, $profile:ident, $args:ty, $(writes: $writes:literal,)? |$at:ident, $a:ident| $body:expr) => {
        $(#[$doc])*
        pub struct $ty;
        impl Operation for $ty {
            const NAME: &'static str = $name;
            const PROFILE: ToolProfile = ToolProfile::$profile;
            $(const WRITES: bool = $writes;)?
            type Args = $args;
            fn run($at: &dyn Scope, $a: &$args) -> Result<Answer> {
                $body
            }
        }
    };
}

use super::{
    changes, context, data_access, deep_search, export, feedback, graph, impact, nav, overview, search, similar, status,
};

operation!(
    /// Hybrid search over the sources (all of them unless one is named).
    Search: "search", Core, search::SearchArgs, |at, a| {
        required(&a.query, "query")?;
        let sources = at.sources()?;
        let mut answer = search::run_sources(sources, a)?;
        if let Some(note) = sources.missing_note() {
            answer.text.push_str(&note);
        }
        Ok(answer)
    }
);
operation!(DescribeSymbol: "describe_symbol", Core, nav::SymbolArgs, |at, a| at
    .fan_out(a.source.name(), |e| nav::describe_symbol(e, a)));
operation!(FindUsages: "find_usages", Core, nav::UsagesArgs, |at, a| at
    .fan_out(a.source.name(), |e| nav::find_usages(e, a)));
operation!(
    /// A symbol's blast radius in the repository, or in each repository of a workspace (where
    /// the ones that import it from another say so); a range's impact in one repository.
    Impact: "impact", Core, impact::ImpactArgs, |at, a| {
        let name = a.source.as_deref().or(a.repo.as_deref());
        if impact::of_symbol(a) && at.sources()?.workspace.is_some() {
            at.fan_out(name, |e| impact::run(e, a))
        } else {
            impact::run(at.one(name)?, a)
        }
    }
);
operation!(
    /// Records an agent's report of what it tried and what failed, beside the index.
    Feedback: "feedback", Core, feedback::FeedbackArgs, writes: true, |at, a| {
        feedback::record_args(&feedback::path(&at.repository()?.ws), a)
    }
);
operation!(FindDefinition: "find_definition", Standard, nav::SymbolArgs, |at, a| at
    .fan_out(a.source.name(), |e| nav::find_definition(e, a)));
operation!(DeepSearch: "deep_search", Standard, deep_search::DeepArgs, |at, a| at
    .fan_out(a.source.name(), |e| deep_search::run(e, a)));
operation!(GraphQuery: "graph_query", Standard, graph::GraphArgs, |at, a| at
    .fan_out(a.source.name(), |e| graph::run(e, a)));
operation!(RepoOverview: "repo_overview", Standard, overview::OverviewArgs, |at, a| overview::run(
    at.one(a.source.name())?,
    a
));
operation!(
    /// Search inside a diff: one source, the repository unless named.
    SearchDiff: "search_diff", Standard, changes::SearchDiffArgs, |at, a| {
        required(&a.query, "query")?;
        changes::search_diff(at.one(a.source.name())?, a)
    }
);
operation!(FindTestsFor: "find_tests_for", Full, nav::TestsArgs, |at, a| at
    .fan_out(a.source.name(), |e| nav::find_tests_for(e, a)));
operation!(DataAccess: "data_access", Full, data_access::DataAccessArgs, |at, a| data_access::run(
    at.repository()?,
    a
));
operation!(Context: "context", Full, context::ContextArgs, |at, a| context::run(at.repository()?, a));
operation!(FindSimilar: "find_similar", Full, similar::SimilarArgs, |at, a| at
    .fan_out(a.source.name(), |e| similar::run(e, a)));
operation!(ModuleSummary: "module_summary", Full, nav::ModuleArgs, |at, a| at
    .fan_out(a.source.name(), |e| nav::module_summary(e, a)));
operation!(
    /// Writes an HTML page of the graph; an agent's page stays inside the repository.
    ExportGraph: "export_graph", Full, export::ExportArgs, writes: true, |at, a| {
        let engine = at.one(a.source.name())?;
        match &a.out {
            Some(out) if at.confined() => {
                let out = export::inside_repository(engine, &out.to_string_lossy())?;
                export::run(engine, &export::ExportArgs { out: Some(out), ..a.clone() })
            }
            _ => export::run(engine, a),
        }
    }
);
operation!(ListSources: "list_sources", Full, status::ListArgs, |at, _a| status::list_sources(at.sources()?));
operation!(GetRagStatus: "get_rag_status", Full, status::StatusArgs, |at, a| status::rag_status(
    at.sources()?,
    a.source.as_deref()
));
operation!(UpdateSourceIndex: "update_source_index", Full, status::UpdateArgs, writes: true, |at, a| {
    status::update(at.sources()?, a)
});
