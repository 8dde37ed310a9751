//! The handshake instructions and the `lynx://guide` resource, generated from the live state:
//! sources, this profile's tools, how to read scores, when to escalate to deep_search.

use super::tools::ToolSpec;
use crate::sources::Sources;

fn has(tools: &[&ToolSpec], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

/// Short instructions sent with `initialize` (agents read these once).
pub fn instructions(
    tools: &[&ToolSpec],
    sources: Option<&Sources>,
    repo: &str,
    profile: crate::config::ToolProfile,
) -> String {
    let mut s = format!("Lynx: local code search and code graph for `{repo}` (profile {profile}). ");
    s.push_str("Use `search` first for any question about this codebase; results cite path:lines and the view (commit or worktree). ");
    if has(tools, "describe_symbol") {
        s.push_str("Before editing a symbol: `describe_symbol` and `impact` (callers + tests to re-run). ");
    }
    if has(tools, "deep_search") {
        s.push_str("If search returns weak or off-topic hits, call `deep_search` with 2-4 rephrasings. ");
    }
    if let Some(src) = sources
        && src.list.len() > 1
    {
        let names: Vec<&str> = src.list.iter().map(|s| s.name.as_str()).collect();
        s.push_str(&format!("Sources: {} (pass `source` to pick one). ", names.join(", ")));
    }
    let hidden = hidden(tools);
    if !hidden.is_empty() {
        s.push_str(&format!(
            "Profile {profile} hides {}; if you need one, ask the user to start the server with `--profile full` (or add it to tools.include). ",
            hidden.join(", ")
        ));
    }
    s.push_str(&format!("Details: resource {}.", super::GUIDE_URI));
    s
}

/// The tools this session does not have.
fn hidden(tools: &[&ToolSpec]) -> Vec<&'static str> {
    super::tools::TOOLS.iter().filter(|t| !has(tools, t.name)).map(|t| t.name).collect()
}

/// The full guide (Markdown).
pub fn guide(
    tools: &[&ToolSpec],
    sources: Option<&Sources>,
    repo: &str,
    profile: crate::config::ToolProfile,
) -> String {
    let mut s = format!(
        "# Lynx in `{repo}`\n\nProfile **{profile}** — tools: {}.\n\n",
        tools.iter().map(|t| format!("`{}`", t.name)).collect::<Vec<_>>().join(", ")
    );
    let hidden = hidden(tools);
    if !hidden.is_empty() {
        s.push_str(&format!(
            "Hidden by this profile: {}. They come with `git lynx serve --profile full`, `LYNX_TOOL_PROFILE=full`, or `tools.include` in the configuration.\n\n",
            hidden.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    s.push_str("## Sources\n\n");
    match sources {
        Some(src) => {
            for x in &src.list {
                // A committed description is the repository's text, not the guide's: left out.
                let about = if x.description.is_empty() || x.committed {
                    String::new()
                } else {
                    format!(": {}", x.description)
                };
                s.push_str(&format!("- `{}` ({}, {}){about}\n", x.name, x.kind, x.path.display()));
            }
        }
        None => s.push_str("- (still loading)\n"),
    }
    s.push_str(
        "\n## Which tool when\n\n\
- `search`: first step for any question (\"where is X handled\", an identifier, an error message).\n",
    );
    for (name, when) in [
        (
            "deep_search",
            "search was weak: pass several phrasings, best first; it stops at the first strong set and warns when none is.",
        ),
        ("find_definition", "you know the name and want where it is defined."),
        ("describe_symbol", "before changing a function or type: definition, callers, callees, bases, tests."),
        ("find_usages", "every place a symbol is used (graph edges and plain mentions, tagged)."),
        (
            "impact",
            "blast radius of a symbol (`symbol`) or of your diff (`changes`: uncommitted, staged, A..B): callers by hop and tests to re-run.",
        ),
        ("search_diff", "reviewing a branch: search only inside what changed."),
        (
            "graph_query",
            "structure: callers/callees/subclasses/imports, neighbors, shortest_path, overview (hubs, communities).",
        ),
        (
            "repo_overview",
            "first contact with the repository: languages, frameworks, entry points, build/test commands.",
        ),
        ("find_tests_for", "which tests cover a symbol or file."),
        ("find_similar", "code like a snippet or a file (duplicates, patterns to follow)."),
        ("module_summary", "what a file defines, imports, and who depends on it."),
        ("context", "a symbol's code with its type, callees and callers packed into a token budget (`budget`)."),
        (
            "data_access",
            "who reads or writes a table, TABLE.COLUMN or stored procedure; no name lists every table. `impact` takes `table` / `column` for the blast radius.",
        ),
        ("export_graph", "an HTML picture of a blast radius for a human."),
        ("get_rag_status", "answers look stale or empty: index health and coverage."),
        ("feedback", "tell Lynx what did not work."),
    ] {
        if has(tools, name) {
            s.push_str(&format!("- `{name}`: {when}\n"));
        }
    }
    s.push_str(
        "\n## Reading scores\n\n\
- `hybrid` (default): 0.6 × BM25 / best BM25 + 0.4 × normalised cosine over both candidate lists (search.fusion, search.dense_weight), \
so scores are 0…1 before the priors. Each hit shows `sparse_rank`/`dense_rank`: a hit found by both retrievers is the most reliable.\n\
- In every mode, test files count half and docs 0.3 unless the query mentions tests or docs, and the definition of an identifier \
written like code (`parseConfig`, in backticks) counts 1.5×; in hybrid and sparse, a hit also gains a share (search.file_evidence, 0.25) of the best other hit \
of its file, and a file's best hit a share (search.coherence, 0.2) of the best score scaled by the sum of its file's candidates. With `rerank`, `score` is a cross-encoder logit and `original_score` the retrieval score.\n\
- `dense`: cosine similarity (−1…1); `sparse`: BM25 (unbounded, higher is better).\n\
- Lists carry `next_cursor`: pass it as `cursor` for the next page instead of asking for a bigger `n_results`. `explain: true` on search says why each hit ranked.\n\
- Escalate to `deep_search` when the top hits do not mention your terms, or come only from one retriever with low scores.\n\n\
## Freshness\n\n\
Every answer names its view: `worktree` (your checkout, uncommitted edits included) or a commit. \
Pass `rev` to ask about another revision (a branch, tag, `HEAD~3`). When the index is catching up with edits, the answer says so in one line.\n",
    );
    s
}
