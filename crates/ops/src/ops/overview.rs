//! `repo_overview`: languages, frameworks, manifests, entry points and build / test / run
//! commands, read from the view's file list and its manifests (no index needed).

use super::{Answer, view_line};
use crate::engine::Engine;
use crate::lang;

use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Overview {
    pub files: usize,
    pub languages: Vec<(String, usize)>,
    pub manifests: Vec<String>,
    pub frameworks: Vec<String>,
    pub entry_points: Vec<String>,
    pub commands: BTreeMap<String, Vec<String>>,
    pub top_directories: Vec<(String, usize)>,
}

/// The package ecosystem a manifest declares dependencies in: names compare by its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eco {
    Npm,
    Python,
    Go,
    Cargo,
    /// Maven coordinates `group:artifact`, from pom.xml and Gradle files.
    Maven,
    NuGet,
    Ruby,
    Php,
    Swift,
    /// Unity's Packages/manifest.json.
    Unity,
}

/// How a declared dependency names a framework: exactly, or as the first of a family.
enum Dep {
    Is(&'static str),
    Prefix(&'static str),
}

/// Declared dependencies that identify a framework, per ecosystem. Only declarations count:
/// a file or identifier named `reactor` or `expression` is no React or Express.
const FRAMEWORKS: &[(Eco, Dep, &str)] = &[
    (Eco::Npm, Dep::Is("react"), "React"),
    (Eco::Npm, Dep::Is("next"), "Next.js"),
    (Eco::Npm, Dep::Is("vue"), "Vue"),
    (Eco::Npm, Dep::Is("@angular/core"), "Angular"),
    (Eco::Npm, Dep::Is("svelte"), "Svelte"),
    (Eco::Npm, Dep::Is("express"), "Express"),
    (Eco::Npm, Dep::Is("fastify"), "Fastify"),
    (Eco::Npm, Dep::Is("@nestjs/core"), "NestJS"),
    (Eco::Npm, Dep::Is("jest"), "Jest"),
    (Eco::Npm, Dep::Is("vitest"), "Vitest"),
    (Eco::Npm, Dep::Is("mocha"), "Mocha"),
    (Eco::Npm, Dep::Is("typescript"), "TypeScript"),
    (Eco::Python, Dep::Is("django"), "Django"),
    (Eco::Python, Dep::Is("flask"), "Flask"),
    (Eco::Python, Dep::Is("fastapi"), "FastAPI"),
    (Eco::Python, Dep::Is("scrapy"), "Scrapy"),
    (Eco::Python, Dep::Is("twisted"), "Twisted"),
    (Eco::Python, Dep::Is("pytest"), "pytest"),
    (Eco::Python, Dep::Is("numpy"), "NumPy"),
    (Eco::Python, Dep::Is("pandas"), "pandas"),
    (Eco::Python, Dep::Is("torch"), "PyTorch"),
    (Eco::Cargo, Dep::Is("tokio"), "Tokio"),
    (Eco::Cargo, Dep::Is("axum"), "axum"),
    (Eco::Cargo, Dep::Is("actix-web"), "Actix Web"),
    (Eco::Cargo, Dep::Is("serde"), "Serde"),
    (Eco::Cargo, Dep::Is("clap"), "clap"),
    (Eco::Cargo, Dep::Is("tantivy"), "tantivy"),
    (Eco::Go, Dep::Is("github.com/gin-gonic/gin"), "Gin"),
    (Eco::Go, Dep::Is("github.com/spf13/cobra"), "Cobra"),
    (Eco::Go, Dep::Is("google.golang.org/grpc"), "gRPC"),
    (Eco::Go, Dep::Is("github.com/prometheus/client_golang"), "Prometheus client"),
    (Eco::Maven, Dep::Prefix("org.springframework.boot:"), "Spring Boot"),
    (Eco::Maven, Dep::Is("junit:junit"), "JUnit"),
    (Eco::Maven, Dep::Prefix("org.junit"), "JUnit"),
    (Eco::Ruby, Dep::Is("rails"), "Ruby on Rails"),
    (Eco::Ruby, Dep::Is("rspec"), "RSpec"),
    (Eco::Ruby, Dep::Prefix("rspec-"), "RSpec"),
    (Eco::Php, Dep::Is("laravel/framework"), "Laravel"),
    (Eco::Php, Dep::Prefix("symfony/"), "Symfony"),
    (Eco::NuGet, Dep::Prefix("microsoft.aspnetcore"), "ASP.NET Core"),
    (Eco::NuGet, Dep::Is("sdk:microsoft.net.sdk.web"), "ASP.NET Core"),
    (Eco::NuGet, Dep::Prefix("xunit"), "xUnit"),
    (Eco::NuGet, Dep::Prefix("nunit"), "NUnit"),
    (Eco::Swift, Dep::Is("vapor"), "Vapor"),
    (Eco::Unity, Dep::Prefix("com.unity."), "Unity"),
];

/// The ecosystem of a manifest file, by its path.
fn ecosystem(path: &str) -> Option<Eco> {
    let name = path.rsplit('/').next().unwrap_or(path);
    Some(match name {
        "package.json" => Eco::Npm,
        "pyproject.toml" | "setup.cfg" | "setup.py" | "Pipfile" => Eco::Python,
        _ if is_requirements(path) => Eco::Python,
        "go.mod" => Eco::Go,
        "Cargo.toml" => Eco::Cargo,
        "pom.xml" | "build.gradle" | "build.gradle.kts" => Eco::Maven,
        "Gemfile" => Eco::Ruby,
        "composer.json" => Eco::Php,
        "Package.swift" => Eco::Swift,
        "manifest.json" if path == "Packages/manifest.json" || path.ends_with("/Packages/manifest.json") => Eco::Unity,
        _ if name.ends_with(".csproj") || name.ends_with(".fsproj") || name.ends_with(".vbproj") => Eco::NuGet,
        _ => return None,
    })
}

/// `requirements.txt`, `requirements-dev.txt`, `requirements/test.txt`.
fn is_requirements(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".txt")
        && (name.starts_with("requirements") || path.split('/').rev().nth(1).is_some_and(|d| d == "requirements"))
}

/// A dependency name as its ecosystem compares them: Python's normalised (PEP 503), NuGet's
/// and Go's case-insensitive ones lowercased, Go's major-version suffix dropped.
fn normalise(eco: Eco, name: &str) -> String {
    let name = name.trim();
    match eco {
        Eco::Python => {
            let mut out = String::with_capacity(name.len());
            for c in name.chars().map(|c| c.to_ascii_lowercase()) {
                let c = if matches!(c, '_' | '.') { '-' } else { c };
                if !(c == '-' && out.ends_with('-')) {
                    out.push(c);
                }
            }
            out
        }
        Eco::Go => {
            let lower = name.to_ascii_lowercase();
            match lower.rsplit_once("/v") {
                Some((base, major)) if !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit()) => {
                    base.to_string()
                }
                _ => lower,
            }
        }
        Eco::NuGet | Eco::Swift => name.to_ascii_lowercase(),
        _ => name.to_string(),
    }
}

/// The leading name of a Python requirement (`Django>=4; python_version>"3.8"` → `Django`).
fn requirement_name(req: &str) -> Option<&str> {
    let req = req.trim();
    let end = req.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))).unwrap_or(req.len());
    let name = &req[..end];
    (!name.is_empty() && name.starts_with(|c: char| c.is_ascii_alphanumeric())).then_some(name)
}

/// The quoted string literals of `text` (single or double quotes, each on one line).
fn string_literals(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j < b.len() && b[j] == q {
                out.push(&text[start..j]);
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The text of the bracketed value after `key` (`key=[...]`, `key = {...}`), brackets included.
fn bracketed_after<'t>(text: &'t str, key: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(key) {
        let after = from + at + key.len();
        from = after;
        let rest = text[after..].trim_start();
        let Some(rest) = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':')) else { continue };
        let rest = rest.trim_start();
        let (open, close) = match rest.chars().next() {
            Some('[') => ('[', ']'),
            Some('{') => ('{', '}'),
            Some('(') => ('(', ')'),
            _ => continue,
        };
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    out.push(&rest[..=i]);
                    break;
                }
            }
        }
    }
    out
}

/// The dependencies a manifest declares, normalised for its ecosystem. Parsed by each format's
/// rules; a manifest that does not parse declares nothing.
fn declared_dependencies(path: &str, text: &str) -> Vec<String> {
    let Some(eco) = ecosystem(path) else { return Vec::new() };
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut deps: Vec<String> = Vec::new();
    let json_keys = |v: &serde_json::Value, fields: &[&str], deps: &mut Vec<String>| {
        for f in fields {
            if let Some(o) = v.get(f).and_then(|d| d.as_object()) {
                deps.extend(o.keys().cloned());
            }
        }
    };
    let toml_keys = |t: Option<&toml::Value>, deps: &mut Vec<String>| {
        if let Some(t) = t.and_then(|t| t.as_table()) {
            for (k, v) in t {
                // `alias = { package = "real-name" }` (Cargo) depends on real-name.
                deps.push(v.get("package").and_then(|p| p.as_str()).unwrap_or(k).to_string());
            }
        }
    };
    let requirements = |items: Option<&toml::Value>, deps: &mut Vec<String>| {
        for r in items.and_then(|a| a.as_array()).into_iter().flatten() {
            if let Some(n) = r.as_str().and_then(requirement_name) {
                deps.push(n.to_string());
            }
        }
    };
    match name {
        "package.json" | "composer.json" | "manifest.json" => {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
                json_keys(
                    &v,
                    &[
                        "dependencies",
                        "devDependencies",
                        "peerDependencies",
                        "optionalDependencies",
                        "require",
                        "require-dev",
                    ],
                    &mut deps,
                );
            }
        }
        "pyproject.toml" => {
            if let Ok(t) = text.parse::<toml::Table>() {
                let project = t.get("project");
                requirements(project.and_then(|p| p.get("dependencies")), &mut deps);
                for group in [project.and_then(|p| p.get("optional-dependencies")), t.get("dependency-groups")] {
                    for (_, items) in group.and_then(|g| g.as_table()).into_iter().flatten() {
                        requirements(Some(items), &mut deps);
                    }
                }
                let poetry = t.get("tool").and_then(|t| t.get("poetry"));
                toml_keys(poetry.and_then(|p| p.get("dependencies")), &mut deps);
                toml_keys(poetry.and_then(|p| p.get("dev-dependencies")), &mut deps);
                for (_, g) in poetry.and_then(|p| p.get("group")).and_then(|g| g.as_table()).into_iter().flatten() {
                    toml_keys(g.get("dependencies"), &mut deps);
                }
                let pdm = t.get("tool").and_then(|t| t.get("pdm")).and_then(|p| p.get("dev-dependencies"));
                for (_, items) in pdm.and_then(|g| g.as_table()).into_iter().flatten() {
                    requirements(Some(items), &mut deps);
                }
            }
        }
        "Pipfile" => {
            if let Ok(t) = text.parse::<toml::Table>() {
                toml_keys(t.get("packages"), &mut deps);
                toml_keys(t.get("dev-packages"), &mut deps);
            }
        }
        "setup.cfg" => {
            // `install_requires =` and `tests_require =` under [options], and every key of
            // [options.extras_require]: one requirement per continuation line (or `;`-separated).
            let mut section = String::new();
            let mut in_list = false;
            for line in text.lines() {
                let trimmed = line.trim();
                if trimmed.starts_with('[') {
                    section = trimmed.trim_matches(['[', ']']).trim().to_string();
                    in_list = false;
                    continue;
                }
                if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
                    continue;
                }
                let continuation = line.starts_with([' ', '\t']);
                let value = if continuation && in_list {
                    trimmed
                } else if let Some((k, v)) = trimmed.split_once('=') {
                    let k = k.trim();
                    in_list = (section == "options" && matches!(k, "install_requires" | "tests_require"))
                        || section == "options.extras_require";
                    if !in_list {
                        continue;
                    }
                    v.trim()
                } else {
                    in_list = false;
                    continue;
                };
                for req in value.split(';').take(1) {
                    if let Some(n) = requirement_name(req) {
                        deps.push(n.to_string());
                    }
                }
            }
        }
        "setup.py" => {
            for key in ["install_requires", "tests_require", "setup_requires"] {
                for block in bracketed_after(text, key) {
                    deps.extend(string_literals(block).into_iter().filter_map(requirement_name).map(String::from));
                }
            }
            // extras_require={"test": ["pytest"]}: the lists' strings, not the extras' names.
            for block in bracketed_after(text, "extras_require") {
                for list in block.split('[').skip(1) {
                    let list = list.split(']').next().unwrap_or("");
                    deps.extend(string_literals(list).into_iter().filter_map(requirement_name).map(String::from));
                }
            }
        }
        _ if is_requirements(path) => {
            for line in text.lines() {
                let line = line.split(" #").next().unwrap_or("").trim();
                // Options (-r, -e, --index-url) and URLs name no package by itself.
                if line.starts_with(['-', '#']) || line.contains("://") {
                    continue;
                }
                if let Some(n) = requirement_name(line) {
                    deps.push(n.to_string());
                }
            }
        }
        "go.mod" => {
            let mut block = false;
            for line in text.lines() {
                let line = line.split("//").next().unwrap_or("").trim();
                let spec = if block {
                    if line.starts_with(')') {
                        block = false;
                        continue;
                    }
                    line
                } else if let Some(rest) = line.strip_prefix("require") {
                    let rest = rest.trim();
                    if rest.starts_with('(') {
                        block = true;
                        continue;
                    }
                    rest
                } else {
                    continue;
                };
                if let Some(module) = spec.split_whitespace().next() {
                    deps.push(module.to_string());
                }
            }
        }
        "Cargo.toml" => {
            if let Ok(t) = text.parse::<toml::Table>() {
                let tables = ["dependencies", "dev-dependencies", "build-dependencies"];
                for k in tables {
                    toml_keys(t.get(k), &mut deps);
                }
                toml_keys(t.get("workspace").and_then(|w| w.get("dependencies")), &mut deps);
                for (_, target) in t.get("target").and_then(|t| t.as_table()).into_iter().flatten() {
                    for k in tables {
                        toml_keys(target.get(k), &mut deps);
                    }
                }
            }
        }
        "pom.xml" => {
            // Each <dependency> and the <parent> (Spring Boot projects inherit its starter parent).
            let block = regex::Regex::new(r"(?s)<(dependency|parent|plugin)>(.*?)</(dependency|parent|plugin)>")
                .expect("valid regex");
            let tag = |body: &str, t: &str| -> Option<String> {
                let open = format!("<{t}>");
                let at = body.find(&open)? + open.len();
                let end = body[at..].find('<')?;
                Some(body[at..at + end].trim().to_string())
            };
            for c in block.captures_iter(text) {
                let body = &c[2];
                if let (Some(g), Some(a)) = (tag(body, "groupId"), tag(body, "artifactId")) {
                    deps.push(format!("{g}:{a}"));
                }
            }
        }
        "build.gradle" | "build.gradle.kts" => {
            // `implementation 'group:artifact:1.0'`, `testImplementation("group:artifact")`, and
            // plugins by id (`id 'org.springframework.boot'`).
            let coord =
                regex::Regex::new(r#"["']([A-Za-z0-9_.\-]+):([A-Za-z0-9_.\-]+)(:[^"']*)?["']"#).expect("valid regex");
            for c in coord.captures_iter(text) {
                deps.push(format!("{}:{}", &c[1], &c[2]));
            }
            let plugin = regex::Regex::new(r#"\bid\s*\(?\s*["']([A-Za-z0-9_.\-]+)["']"#).expect("valid regex");
            for c in plugin.captures_iter(text) {
                deps.push(format!("{}:", &c[1]));
            }
        }
        "Gemfile" => {
            let gem = regex::Regex::new(r#"(?m)^\s*gem\s+["']([A-Za-z0-9_.\-]+)["']"#).expect("valid regex");
            deps.extend(gem.captures_iter(text).map(|c| c[1].to_string()));
        }
        "Package.swift" => {
            // `.package(url: "https://github.com/vapor/vapor.git", …)` names the repository;
            // `.package(name: "X", …)` names the package.
            let url = regex::Regex::new(r#"\.package\s*\([^)]*?url:\s*"([^"]+)""#).expect("valid regex");
            for c in url.captures_iter(text) {
                let repo = c[1].trim_end_matches('/').rsplit('/').next().unwrap_or("").trim_end_matches(".git");
                deps.push(repo.to_string());
            }
            let named = regex::Regex::new(r#"\.package\s*\(\s*name:\s*"([^"]+)""#).expect("valid regex");
            deps.extend(named.captures_iter(text).map(|c| c[1].to_string()));
        }
        _ if eco == Eco::NuGet => {
            let pkg =
                regex::Regex::new(r#"<PackageReference\s+(?:Include|Update)\s*=\s*"([^"]+)""#).expect("valid regex");
            deps.extend(pkg.captures_iter(text).map(|c| c[1].to_string()));
            let sdk = regex::Regex::new(r#"<Project\s+Sdk\s*=\s*"([^"]+)""#).expect("valid regex");
            deps.extend(sdk.captures_iter(text).map(|c| format!("sdk:{}", &c[1])));
        }
        _ => {}
    }
    let mut out: Vec<String> = deps.iter().map(|d| normalise(eco, d)).filter(|d| !d.is_empty()).collect();
    out.sort();
    out.dedup();
    out
}

/// The frameworks a manifest's declared dependencies name.
fn frameworks_of(path: &str, deps: &[String]) -> Vec<&'static str> {
    let Some(eco) = ecosystem(path) else { return Vec::new() };
    FRAMEWORKS
        .iter()
        .filter(|(e, dep, _)| {
            *e == eco
                && deps.iter().any(|d| match dep {
                    Dep::Is(n) => d == &normalise(eco, n),
                    Dep::Prefix(p) => d.starts_with(&normalise(eco, p)),
                })
        })
        .map(|(_, _, fw)| *fw)
        .collect()
}

/// A path inside a tree that shows, tests, documents or measures the project rather than
/// being it: its manifests say what that tree uses, and its entry points come last.
fn auxiliary(path: &str) -> bool {
    path.split('/').rev().skip(1).any(|d| {
        matches!(
            d.to_ascii_lowercase().as_str(),
            "tools"
                | "tool"
                | "scripts"
                | "examples"
                | "example"
                | "samples"
                | "sample"
                | "demo"
                | "demos"
                | "docs"
                | "doc"
                | "documentation"
                | "test"
                | "tests"
                | "testdata"
                | "fixtures"
                | "hack"
                | "third_party"
                | "vendor"
                | "bench"
                | "benches"
                | "benchmark"
                | "benchmarks"
        )
    })
}

/// `repo_overview`'s arguments on every surface.
#[derive(clap::Args, Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct OverviewArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub at: super::args::Rev,
    #[command(flatten)]
    #[serde(flatten)]
    pub source: super::args::OneSource,
}

pub fn run(engine: &Engine, a: &OverviewArgs) -> Result<Answer> {
    let view = engine.view(&engine.spec(a.at.rev.as_deref()))?;
    let repo = engine.ws.repo.local();
    let read = |path: &str| -> Option<String> {
        let f = view.files.iter().find(|f| f.path == path)?;
        let bytes = match &f.content {
            Some(c) => c.to_vec(),
            None => crate::repo::Repo::read_blob(&repo, f.blob).ok()?,
        };
        (bytes.len() < 2_000_000).then(|| crate::encoding::text(&bytes).into_owned())
    };
    let mut langs: BTreeMap<String, usize> = BTreeMap::new();
    let mut dirs: BTreeMap<String, usize> = BTreeMap::new();
    for f in &view.files {
        if let Some(l) = lang::by_path(&f.path).filter(|l| l.is_code()) {
            *langs.entry(l.name().to_string()).or_default() += 1;
        }
        let top = f.path.split_once('/').map_or(".", |(d, _)| d).to_string();
        *dirs.entry(top).or_default() += 1;
    }
    let mut languages: Vec<(String, usize)> = langs.into_iter().collect();
    languages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut top_directories: Vec<(String, usize)> = dirs.into_iter().collect();
    top_directories.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top_directories.truncate(12);

    let manifest_names = [
        "package.json",
        "Cargo.toml",
        "go.mod",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "Pipfile",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "Gemfile",
        "composer.json",
        "Package.swift",
        "build.sbt",
        "CMakeLists.txt",
        "Makefile",
        "Dockerfile",
        "docker-compose.yml",
        "tsconfig.json",
        "deno.json",
        "mix.exs",
        "Justfile",
        "justfile",
        "Taskfile.yml",
        "tox.ini",
        "noxfile.py",
    ];
    let mut manifests: Vec<String> = view
        .files
        .iter()
        .filter(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
            (manifest_names.contains(&name)
                || name.ends_with(".csproj")
                || name.ends_with(".sln")
                || is_requirements(&f.path)
                || ecosystem(&f.path) == Some(Eco::Unity))
                && f.path.matches('/').count() <= 2
        })
        .map(|f| f.path.clone())
        .collect();
    // The project's own first: a helper tree's manifests after it.
    manifests.sort_by_key(|p| (auxiliary(p), p.matches('/').count(), p.clone()));
    manifests.truncate(30);

    let mut frameworks: Vec<String> = Vec::new();
    let mut commands: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add = |kind: &str, cmd: String| {
        let v = commands.entry(kind.to_string()).or_default();
        if !v.contains(&cmd) && v.len() < 8 {
            v.push(cmd);
        }
    };
    // A manifest of a helper tree (a tools module, examples, docs, test data) says what that
    // tree uses, not the project: it counts only when nothing else does.
    let own: Vec<&String> = manifests.iter().filter(|m| !auxiliary(m)).collect();
    let read_from: Vec<&String> = if own.is_empty() { manifests.iter().collect() } else { own };
    let has_file = |name: &str| view.files.iter().any(|f| f.path == name || f.path.ends_with(&format!("/{name}")));
    let runner = script_runner(read("package.json").as_deref(), &|name| has_file(name));
    for m in read_from {
        let Some(text) = read(m) else { continue };
        let name = m.rsplit('/').next().unwrap_or(m);
        let deps = declared_dependencies(m, &text);
        for fw in frameworks_of(m, &deps) {
            if !frameworks.iter().any(|f| f == fw) {
                frameworks.push(fw.to_string());
            }
        }
        let dir = m.rsplit_once('/').map(|(d, _)| format!("cd {d} && ")).unwrap_or_default();
        match name {
            "package.json" => {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
                    && let Some(scripts) = v["scripts"].as_object()
                {
                    for (k, _) in scripts {
                        let kind = if k.contains("test") {
                            "test"
                        } else if k.contains("build") {
                            "build"
                        } else if matches!(k.as_str(), "start" | "dev" | "serve") {
                            "run"
                        } else {
                            continue;
                        };
                        add(kind, format!("{dir}{runner} {k}"));
                    }
                }
            }
            "Cargo.toml" => {
                add("build", format!("{dir}cargo build"));
                add("test", format!("{dir}cargo test"));
                if text.contains("[[bin]]") || view.files.iter().any(|f| f.path.ends_with("src/main.rs")) {
                    add("run", format!("{dir}cargo run"));
                }
            }
            "go.mod" => {
                add("build", format!("{dir}go build ./..."));
                add("test", format!("{dir}go test ./..."));
            }
            "pyproject.toml" | "setup.py" | "setup.cfg" | "requirements.txt" | "tox.ini" => {
                add("build", format!("{dir}pip install -e ."));
                let pytest_config = (name == "pyproject.toml" && text.contains("[tool.pytest"))
                    || (name == "setup.cfg" && text.contains("[tool:pytest]"))
                    || (name == "tox.ini" && text.contains("pytest"));
                if deps.iter().any(|d| d == "pytest")
                    || pytest_config
                    || has_file("conftest.py")
                    || has_file("pytest.ini")
                {
                    add("test", format!("{dir}pytest"));
                }
            }
            "pom.xml" => {
                add("build", format!("{dir}mvn package"));
                add("test", format!("{dir}mvn test"));
            }
            "build.gradle" | "build.gradle.kts" => {
                add("build", format!("{dir}./gradlew build"));
                add("test", format!("{dir}./gradlew test"));
            }
            "Makefile" => {
                for l in text.lines() {
                    if let Some((target, _)) = l.split_once(':')
                        && !target.is_empty()
                        && !target.starts_with(['.', '\t', ' ', '#'])
                        && target.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_')
                    {
                        let kind = if target.contains("test") {
                            "test"
                        } else if target.contains("build") || target == "all" {
                            "build"
                        } else if matches!(target, "run" | "serve" | "start") {
                            "run"
                        } else {
                            continue;
                        };
                        add(kind, format!("{dir}make {target}"));
                    }
                }
            }
            "Gemfile" => add("test", format!("{dir}bundle exec rake test")),
            "CMakeLists.txt" => add("build", format!("{dir}cmake -B build && cmake --build build")),
            _ if name.ends_with(".csproj") || name.ends_with(".sln") => {
                add("build", format!("dotnet build {m}"));
                add("test", "dotnet test".to_string());
            }
            _ => {}
        }
    }
    let entry_names = [
        "main.go",
        "main.rs",
        "__main__.py",
        "manage.py",
        "app.py",
        "main.py",
        "index.js",
        "index.ts",
        "server.js",
        "server.ts",
        "Program.cs",
        "main.c",
        "main.cpp",
        "Main.java",
        "Main.kt",
        "main.swift",
        "cli.py",
    ];
    let mut entry_points: Vec<String> = view
        .files
        .iter()
        .filter(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
            (entry_names.contains(&name)
                || f.path.starts_with("bin/")
                || f.path.starts_with("cmd/") && name.ends_with(".go")
                || f.path.contains("/bin/") && f.path.ends_with(".rs"))
                && !crate::graph::model::is_test_path(&f.path)
        })
        .map(|f| f.path.clone())
        .collect();
    // The project's own entry points before those of its examples, docs, tests and benchmarks.
    entry_points.sort_by_key(|p| (auxiliary(p), p.matches('/').count(), p.clone()));
    entry_points.truncate(20);
    let o =
        Overview { files: view.files.len(), languages, manifests, frameworks, entry_points, commands, top_directories };
    let mut text = format!("{}\n{} files\n", view_line(&view.id), o.files);
    let langs: Vec<String> = o.languages.iter().take(8).map(|(l, n)| format!("{l} {n}")).collect();
    text.push_str(&format!("languages: {}\n", if langs.is_empty() { "(no code)".into() } else { langs.join(", ") }));
    text.push_str(&format!(
        "frameworks: {}\n",
        if o.frameworks.is_empty() { "(none detected)".into() } else { o.frameworks.join(", ") }
    ));
    text.push_str(&format!("manifests: {}\n", first_of(&o.manifests, 6, ", ", "(none)")));
    text.push_str(&format!("entry points: {}\n", first_of(&o.entry_points, 6, ", ", "(none detected)")));
    for (k, v) in &o.commands {
        text.push_str(&format!("{k}: {}\n", first_of(v, 3, " | ", "")));
    }
    let dirs: Vec<String> = o.top_directories.iter().map(|(d, n)| format!("{d} ({n})")).collect();
    text.push_str(&format!("top-level: {}\n", dirs.join(", ")));
    Ok(Answer::new("repo_overview", Some(view.id.clone()), &o, text))
}

results!(Overview);

/// The first `n` of a list (the project's own come first), then how many more `--json` has.
fn first_of(items: &[String], n: usize, sep: &str, none: &str) -> String {
    if items.is_empty() {
        return none.to_string();
    }
    let mut out = items[..items.len().min(n)].join(sep);
    if items.len() > n {
        out.push_str(&format!(" (+{} more)", items.len() - n));
    }
    out
}

/// How a JavaScript project runs its scripts: the package manager it declares
/// (`"packageManager": "pnpm@9"`), else the one whose lock file it commits, else npm.
fn script_runner(root_package: Option<&str>, has_file: &dyn Fn(&str) -> bool) -> &'static str {
    let declared = root_package
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .and_then(|v| v["packageManager"].as_str().map(|s| s.split('@').next().unwrap_or("").to_string()));
    match declared.as_deref() {
        Some("pnpm") => return "pnpm run",
        Some("yarn") => return "yarn run",
        Some("bun") => return "bun run",
        Some("npm") => return "npm run",
        _ => {}
    }
    if has_file("pnpm-lock.yaml") || has_file("pnpm-workspace.yaml") {
        "pnpm run"
    } else if has_file("yarn.lock") {
        "yarn run"
    } else if has_file("bun.lockb") || has_file("bun.lock") {
        "bun run"
    } else {
        "npm run"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(path: &str, text: &str) -> Vec<&'static str> {
        frameworks_of(path, &declared_dependencies(path, text))
    }

    #[test]
    fn scripts_run_with_the_declared_package_manager() {
        let none = |_: &str| false;
        assert_eq!(script_runner(Some(r#"{"packageManager": "pnpm@9.1.0"}"#), &none), "pnpm run");
        assert_eq!(script_runner(Some("{}"), &|f| f == "yarn.lock"), "yarn run");
        assert_eq!(script_runner(Some("{}"), &none), "npm run");
        assert_eq!(first_of(&["a".into(), "b".into(), "c".into()], 2, ", ", "-"), "a, b (+1 more)");
    }

    #[test]
    fn frameworks_come_from_declared_dependencies_only() {
        // Words that contain a framework's name are not a dependency on it.
        let pyproject = "[project]\nname = \"scrapy\"\ndependencies = [\"Twisted>=18.9\", \"lxml\", \"itemadapter\"]\n\
            [project.optional-dependencies]\ntest = [\"pytest>=7; python_version>'3.8'\"]\n\
            [tool.pytest.ini_options]\naddopts = \"--reactor=asyncio\"\n# expression, reactor, nextjs\n";
        assert_eq!(fw("pyproject.toml", pyproject), ["Twisted", "pytest"]);
        assert_eq!(
            fw("pyproject.toml", "[tool.poetry.dependencies]\npython = \"^3.10\"\nDjango = \"^5\"\n"),
            ["Django"]
        );
        assert_eq!(
            fw(
                "setup.py",
                "setup(\n  name='x',\n  install_requires=['numpy>=1.2', \"pandas\"],\n  extras_require={'react': ['pytest']},\n)\n"
            ),
            ["pytest", "NumPy", "pandas"]
        );
        assert_eq!(
            fw(
                "setup.cfg",
                "[metadata]\nname = react\n[options]\ninstall_requires =\n    flask>=2\n    click\npython_requires = >=3.8\n[options.extras_require]\ntest = pytest\n"
            ),
            ["Flask", "pytest"]
        );
        assert_eq!(
            fw("requirements-dev.txt", "-r requirements.txt\n# react\nFastAPI[all]==0.1  # api\ntorch\n"),
            ["FastAPI", "PyTorch"]
        );
        assert_eq!(fw("requirements/test.txt", "pytest\n"), ["pytest"]);
        let pkg = r#"{"name": "expression-eval", "description": "react to expressions", "dependencies": {"vue": "^3"}, "devDependencies": {"vitest": "1"}, "scripts": {"test": "jest"}}"#;
        assert_eq!(fw("package.json", pkg), ["Vue", "Vitest"]);
        assert_eq!(
            fw(
                "go.mod",
                "module example.com/reactor\n\nrequire github.com/spf13/cobra v1.8.0\nrequire (\n\tgithub.com/gin-gonic/gin v1.9.1 // indirect\n\tgoogle.golang.org/grpc v1.60.0\n)\n"
            ),
            ["Gin", "Cobra", "gRPC"]
        );
        assert_eq!(
            fw(
                "Cargo.toml",
                "[package]\nname = \"clapper\"\n[dependencies]\nserde = \"1\"\nrt = { package = \"tokio\", version = \"1\" }\n[target.'cfg(unix)'.dev-dependencies]\naxum = \"0.7\"\n"
            ),
            ["Tokio", "axum", "Serde"]
        );
        let pom = "<project><parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId></parent>\
            <dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId></dependency></dependencies></project>";
        assert_eq!(fw("pom.xml", pom), ["Spring Boot", "JUnit"]);
        assert_eq!(
            fw(
                "build.gradle.kts",
                "plugins { id(\"org.springframework.boot\") version \"3\" }\ndependencies { testImplementation(\"org.junit.jupiter:junit-jupiter:5.10.0\") }\n"
            ),
            ["Spring Boot", "JUnit"]
        );
        assert_eq!(
            fw(
                "src/Api/Api.csproj",
                "<Project Sdk=\"Microsoft.NET.Sdk.Web\">\n  <ItemGroup><PackageReference Include=\"xunit\" Version=\"2\" /></ItemGroup>\n</Project>"
            ),
            ["ASP.NET Core", "xUnit"]
        );
        assert_eq!(
            fw("Gemfile", "source 'https://rubygems.org'\ngem 'rails', '~> 7'\n# gem 'rspec'\n"),
            ["Ruby on Rails"]
        );
        assert_eq!(fw("composer.json", r#"{"require": {"symfony/console": "^6"}}"#), ["Symfony"]);
        assert_eq!(
            fw(
                "Package.swift",
                "dependencies: [\n .package(url: \"https://github.com/vapor/vapor.git\", from: \"4.0.0\"),\n]"
            ),
            ["Vapor"]
        );
        // Not a manifest, or not one that parses: nothing.
        assert!(fw("reactor.py", "import react").is_empty());
        assert!(fw("package.json", "{ not json react").is_empty());
    }

    #[test]
    fn helper_trees_rank_after_the_project() {
        let mut paths = vec![
            "examples/basic/index.js",
            "src/server/index.ts",
            "benchmarks/main.py",
            "docs/app.py",
            "cmd/server/main.go",
        ];
        paths.sort_by_key(|p| (auxiliary(p), p.matches('/').count(), p.to_string()));
        assert_eq!(
            paths,
            [
                "cmd/server/main.go",
                "src/server/index.ts",
                "benchmarks/main.py",
                "docs/app.py",
                "examples/basic/index.js"
            ]
        );
    }
}
