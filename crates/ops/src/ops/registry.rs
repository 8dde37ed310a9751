//! The operations an agent can ask for, each declared once: its name, its argument type, the
//! smallest tool profile that offers it, whether it writes, the result types its answers carry
//! (and which of them it gives per source), and how it runs over the sources.
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

/// One kind of answer an operation gives: its result type's schema.
pub type Shape = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// The schema of the result type `T`.
pub fn shape<T: schemars::JsonSchema>(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    T::json_schema(g)
}

/// The answers an operation gives: each kind's result type, and the kinds it gives one part
/// per source of when asked of several sources (`over_sources`; none when it never fans out).
pub struct Outputs {
    pub shapes: &'static [Shape],
    pub per_source: &'static [Shape],
}

/// One operation: its argument type is its command line options (clap), its MCP arguments
/// (serde) and its MCP input schema (schemars); its outputs are the result types its answers
/// carry (the MCP output schema).
pub trait Operation {
    /// The MCP tool's name, and the operation's in answers and logs.
    const NAME: &'static str;
    /// The smallest MCP tool profile that offers it.
    const PROFILE: ToolProfile;
    /// Whether it writes files (a committed configuration cannot give such a tool to an agent).
    const WRITES: bool = false;
    type Args: serde::de::DeserializeOwned + schemars::JsonSchema;
    const OUTPUT: Outputs;
    fn run(at: &dyn Scope, args: &Self::Args) -> Result<Answer>;
}

/// Reads an MCP call's arguments (already in this program's names) as `O`'s and runs it.
pub fn call<O: Operation>(at: &dyn Scope, args: &Map<String, Value>) -> Result<Answer> {
    O::run(at, &parse::<O::Args>(args)?)
}

macro_rules! operation {
    ($(#[$doc:meta])* $ty:ident: $name:literal, $profile:ident, $args:ty, [$($out:ty),+ $(,)?] $(per_source [$($fan:ty),+])?, $(writes: $writes:literal,)? |$at:ident, $a:ident| $body:expr) => {
        $(#[$doc])*
        pub struct $ty;
        impl Operation for $ty {
            const NAME: &'static str = $name;
            const PROFILE: ToolProfile = ToolProfile::$profile;
            $(const WRITES: bool = $writes;)?
            type Args = $args;
            const OUTPUT: Outputs = Outputs { shapes: &[$(shape::<$out>),+], per_source: &[$($(shape::<$fan>),+)?] };
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
    Search: "search", Core, search::SearchArgs, [search::SearchResult], |at, a| {
        required(&a.query, "query")?;
        let sources = at.sources()?;
        let mut answer = search::run_sources(sources, a)?;
        if let Some(note) = sources.missing_note() {
            answer.text.push_str(&note);
        }
        Ok(answer)
    }
);
operation!(DescribeSymbol: "describe_symbol", Core, nav::SymbolArgs, [nav::Describe, super::Unmatched] per_source [nav::Describe, super::Unmatched], |at, a| at
    .fan_out(a.source.name(), |e| nav::describe_symbol(e, a)));
operation!(FindUsages: "find_usages", Core, nav::UsagesArgs, [nav::FindUsages, super::Unmatched] per_source [nav::FindUsages, super::Unmatched], |at, a| at
    .fan_out(a.source.name(), |e| nav::find_usages(e, a)));
operation!(
    /// A symbol's blast radius in the repository, or in each repository of a workspace (where
    /// the ones that import it from another say so); a range's impact in one repository.
    Impact: "impact", Core, impact::ImpactArgs, [nav::Impact, super::Unmatched, changes::RangeImpact, data_access::TableImpact] per_source [nav::Impact, super::Unmatched], |at, a| {
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
    Feedback: "feedback", Core, feedback::FeedbackArgs, [feedback::Recorded], writes: true, |at, a| {
        feedback::record_args(&feedback::path(&at.repository()?.ws), a)
    }
);
operation!(FindDefinition: "find_definition", Standard, nav::SymbolArgs, [nav::FindDefinition, super::Unmatched] per_source [nav::FindDefinition, super::Unmatched], |at, a| at
    .fan_out(a.source.name(), |e| nav::find_definition(e, a)));
operation!(DeepSearch: "deep_search", Standard, deep_search::DeepArgs, [deep_search::DeepResult] per_source [deep_search::DeepResult], |at, a| at
    .fan_out(a.source.name(), |e| deep_search::run(e, a)));
operation!(GraphQuery: "graph_query", Standard, graph::GraphArgs, [graph::Traversal, graph::GraphPath, graph::GraphStatus, graph::GraphOverview, graph::Surprises] per_source [graph::Traversal, graph::GraphPath, graph::GraphStatus, graph::GraphOverview, graph::Surprises], |at, a| at
    .fan_out(a.source.name(), |e| graph::run(e, a)));
operation!(RepoOverview: "repo_overview", Standard, overview::OverviewArgs, [overview::Overview], |at, a| overview::run(
    at.one(a.source.name())?,
    a
));
operation!(
    /// Search inside a diff: one source, the repository unless named.
    SearchDiff: "search_diff", Standard, changes::SearchDiffArgs, [changes::SearchDiffResult], |at, a| {
        required(&a.query, "query")?;
        changes::search_diff(at.one(a.source.name())?, a)
    }
);
operation!(FindTestsFor: "find_tests_for", Full, nav::TestsArgs, [nav::FindTests, super::Unmatched] per_source [nav::FindTests, super::Unmatched], |at, a| at
    .fan_out(a.source.name(), |e| nav::find_tests_for(e, a)));
operation!(DataAccess: "data_access", Full, data_access::DataAccessArgs, [data_access::DataAccess], |at, a| data_access::run(
    at.repository()?,
    a
));
operation!(Context: "context", Full, context::ContextArgs, [context::ContextSlice], |at, a| context::run(at.repository()?, a));
operation!(FindSimilar: "find_similar", Full, similar::SimilarArgs, [search::SearchResult] per_source [search::SearchResult], |at, a| at
    .fan_out(a.source.name(), |e| similar::run(e, a)));
operation!(ModuleSummary: "module_summary", Full, nav::ModuleArgs, [nav::ModuleSummary, nav::UnmatchedFile] per_source [nav::ModuleSummary, nav::UnmatchedFile], |at, a| at
    .fan_out(a.source.name(), |e| nav::module_summary(e, a)));
operation!(
    /// Writes an HTML page of the graph; an agent's page stays inside the repository.
    ExportGraph: "export_graph", Full, export::ExportArgs, [export::Exported], writes: true, |at, a| {
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
operation!(ListSources: "list_sources", Full, status::ListArgs, [status::SourceList], |at, _a| status::list_sources(at.sources()?));
operation!(GetRagStatus: "get_rag_status", Full, status::StatusArgs, [status::RagStatus], |at, a| status::rag_status(
    at.sources()?,
    a.source.as_deref()
));
operation!(UpdateSourceIndex: "update_source_index", Full, status::UpdateArgs, [status::SourceUpdates], writes: true, |at, a| {
    status::update(at.sources()?, a)
});
