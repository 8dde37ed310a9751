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

/// Dependency names that identify a framework, per ecosystem.
const FRAMEWORKS: &[(&str, &str)] = &[
    ("react", "React"),
    ("next", "Next.js"),
    ("vue", "Vue"),
    ("@angular/core", "Angular"),
    ("svelte", "Svelte"),
    ("express", "Express"),
    ("fastify", "Fastify"),
    ("@nestjs/core", "NestJS"),
    ("jest", "Jest"),
    ("vitest", "Vitest"),
    ("mocha", "Mocha"),
    ("typescript", "TypeScript"),
    ("django", "Django"),
    ("flask", "Flask"),
    ("fastapi", "FastAPI"),
    ("pytest", "pytest"),
    ("numpy", "NumPy"),
    ("pandas", "pandas"),
    ("torch", "PyTorch"),
    ("tokio", "Tokio"),
    ("axum", "axum"),
    ("actix-web", "Actix Web"),
    ("serde", "Serde"),
    ("clap", "clap"),
    ("tantivy", "tantivy"),
    ("github.com/gin-gonic/gin", "Gin"),
    ("github.com/spf13/cobra", "Cobra"),
    ("google.golang.org/grpc", "gRPC"),
    ("github.com/prometheus/client_golang", "Prometheus client"),
    ("spring-boot", "Spring Boot"),
    ("junit", "JUnit"),
    ("rails", "Ruby on Rails"),
    ("rspec", "RSpec"),
    ("laravel/framework", "Laravel"),
    ("symfony", "Symfony"),
    ("Microsoft.AspNetCore", "ASP.NET Core"),
    ("UnityEngine", "Unity"),
    ("xunit", "xUnit"),
    ("NUnit", "NUnit"),
];

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
            (manifest_names.contains(&name) || name.ends_with(".csproj") || name.ends_with(".sln"))
                && f.path.matches('/').count() <= 2
        })
        .map(|f| f.path.clone())
        .collect();
    manifests.sort_by_key(|p| (p.matches('/').count(), p.clone()));
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
    let auxiliary = |p: &str| {
        p.split('/').rev().skip(1).any(|d| {
            matches!(
                d,
                "tools"
                    | "tool"
                    | "scripts"
                    | "examples"
                    | "example"
                    | "docs"
                    | "doc"
                    | "documentation"
                    | "testdata"
                    | "hack"
                    | "third_party"
                    | "vendor"
                    | "fixtures"
                    | "bench"
                    | "benchmarks"
            )
        })
    };
    let own: Vec<&String> = manifests.iter().filter(|m| !auxiliary(m)).collect();
    let read_from: Vec<&String> = if own.is_empty() { manifests.iter().collect() } else { own };
    for m in read_from {
        let Some(text) = read(m) else { continue };
        let name = m.rsplit('/').next().unwrap_or(m);
        for (dep, fw) in FRAMEWORKS {
            let hit = match name {
                "package.json" | "composer.json" => text.contains(&format!("\"{dep}\"")),
                "Cargo.toml" => text.lines().any(|l| {
                    l.trim_start().starts_with(&format!("{dep} ")) || l.trim_start().starts_with(&format!("{dep}="))
                }),
                _ => text.contains(dep),
            };
            if hit && !frameworks.contains(&fw.to_string()) {
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
                        add(kind, format!("{dir}npm run {k}"));
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
            "pyproject.toml" | "setup.py" | "requirements.txt" | "tox.ini" => {
                add("build", format!("{dir}pip install -e ."));
                if text.contains("pytest") || view.files.iter().any(|f| f.path.ends_with("conftest.py")) {
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
    entry_points.sort_by_key(|p| (p.matches('/').count(), p.clone()));
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
    text.push_str(&format!(
        "manifests: {}\n",
        if o.manifests.is_empty() { "(none)".into() } else { o.manifests.join(", ") }
    ));
    text.push_str(&format!(
        "entry points: {}\n",
        if o.entry_points.is_empty() { "(none detected)".into() } else { o.entry_points.join(", ") }
    ));
    for (k, v) in &o.commands {
        text.push_str(&format!("{k}: {}\n", v.join(" | ")));
    }
    let dirs: Vec<String> = o.top_directories.iter().map(|(d, n)| format!("{d} ({n})")).collect();
    text.push_str(&format!("top-level: {}\n", dirs.join(", ")));
    Ok(Answer::new("repo_overview", Some(view.id.clone()), &o, text))
}

results!(Overview);
