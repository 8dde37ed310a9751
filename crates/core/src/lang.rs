//! Language detection: which grammar (if any) a path's content is chunked with.

use serde::{Deserialize, Serialize};

crate::error::errors! {
    /// A language name Lynx does not know.
    pub enum LangError: Usage {
        Unknown { name: String, known: String } => "unknown language `{name}`; known: {known}",
    }
}

/// Every language with a tree-sitter grammar, plus the text kinds chunked by line windows.
/// The discriminants are stored in object keys (language hints): append, never reorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    CSharp,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    C,
    Cpp,
    ObjC,
    Go,
    Rust,
    Java,
    Ruby,
    Php,
    Kotlin,
    Swift,
    Scala,
    Lua,
    Bash,
    Sql,
    Markdown,
    Json,
    Yaml,
    Toml,
    Text,
}

impl Lang {
    pub const ALL: [Lang; 24] = [
        Lang::CSharp,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::C,
        Lang::Cpp,
        Lang::ObjC,
        Lang::Go,
        Lang::Rust,
        Lang::Java,
        Lang::Ruby,
        Lang::Php,
        Lang::Kotlin,
        Lang::Swift,
        Lang::Scala,
        Lang::Lua,
        Lang::Bash,
        Lang::Sql,
        Lang::Markdown,
        Lang::Json,
        Lang::Yaml,
        Lang::Toml,
        Lang::Text,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Lang::CSharp => "csharp",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::ObjC => "objc",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::Java => "java",
            Lang::Ruby => "ruby",
            Lang::Php => "php",
            Lang::Kotlin => "kotlin",
            Lang::Swift => "swift",
            Lang::Scala => "scala",
            Lang::Lua => "lua",
            Lang::Bash => "bash",
            Lang::Sql => "sql",
            Lang::Markdown => "markdown",
            Lang::Json => "json",
            Lang::Yaml => "yaml",
            Lang::Toml => "toml",
            Lang::Text => "text",
        }
    }

    pub fn from_code(code: u8) -> Option<Lang> {
        Lang::ALL.get(code as usize).copied()
    }

    /// The languages a user means by `name`: a language name or a common alias (`py`, `c#`,
    /// `ts` — which includes TSX —, `c++`, `golang`, `sh`…), case-insensitive; an error lists
    /// the names when none matches.
    pub fn matching(name: &str) -> Result<Vec<Lang>, LangError> {
        let n = name.trim().to_ascii_lowercase();
        let canonical = match n.as_str() {
            "c#" | "cs" | "csharp" | "c-sharp" => "csharp",
            "py" | "python3" => "python",
            "ts" | "typescript" => return Ok(vec![Lang::TypeScript, Lang::Tsx]),
            "js" | "jsx" | "node" | "javascript" => "javascript",
            "c++" | "cxx" | "cc" | "hpp" => "cpp",
            "objective-c" | "objectivec" | "obj-c" | "m" => "objc",
            "golang" => "go",
            "rs" => "rust",
            "rb" => "ruby",
            "kt" | "kts" => "kotlin",
            "sh" | "shell" | "zsh" => "bash",
            "md" => "markdown",
            "yml" => "yaml",
            "txt" => "text",
            other => other,
        };
        match Lang::from_name(canonical) {
            Some(l) => Ok(vec![l]),
            None => Err(LangError::Unknown {
                name: name.to_string(),
                known: Lang::ALL.iter().map(|l| l.name()).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    pub fn from_name(name: &str) -> Option<Lang> {
        Lang::ALL.iter().copied().find(|l| l.name() == name)
    }

    /// True when the language is parsed with tree-sitter (the others use the line-window splitter).
    pub fn has_grammar(self) -> bool {
        !matches!(self, Lang::Markdown | Lang::Json | Lang::Yaml | Lang::Toml | Lang::Text)
    }

    /// Languages whose definitions are code (used to tell source from docs and data).
    pub fn is_code(self) -> bool {
        self.has_grammar()
    }
}

/// Source files of programming languages without a grammar here (Haskell, Elixir, Erlang, Zig,
/// OCaml, F#, Clojure, Dart, R, Julia, Perl, …): split into line windows like text, but code,
/// not prose — a question about the repository is about them as much as about its parsed files.
pub fn is_source_without_grammar(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else { return false };
    !stem.is_empty()
        && matches!(
            ext.to_ascii_lowercase().as_str(),
            "hs" | "lhs"
                | "ex"
                | "exs"
                | "erl"
                | "hrl"
                | "zig"
                | "ml"
                | "mli"
                | "fs"
                | "fsi"
                | "fsx"
                | "clj"
                | "cljs"
                | "cljc"
                | "dart"
                | "jl"
                | "r"
                | "pl"
                | "pm"
                | "nim"
                | "elm"
                | "cr"
                | "nix"
                | "groovy"
                | "gradle"
                | "ps1"
                | "psm1"
                | "vue"
                | "svelte"
                | "hx"
                | "d"
                | "f90"
                | "lisp"
                | "el"
                | "scm"
                | "rkt"
                | "purs"
                | "sol"
                | "vala"
                | "tcl"
                | "vb"
                | "proto"
                | "graphql"
                | "gql"
                | "thrift"
                | "coffee"
                | "hcl"
                | "tf"
                | "ada"
                | "adb"
                | "ads"
                | "pas"
                | "pyx"
                | "pxd"
        )
}

/// Whether a file of language `lang` at `path` is code (parsed, or source without a grammar).
pub fn is_code_file(lang: Lang, path: &str) -> bool {
    lang.is_code() || is_source_without_grammar(path)
}

/// Language by file name alone; `None` means "look at the content" (or not text at all).
/// Whether a path names a documentation page of a webdoc or pdf source (a URL, or
/// `file.pdf#page=N`): their text is Markdown made by Lynx.
pub fn is_document_page(path: &str) -> bool {
    path.starts_with("https://")
        || path.starts_with("http://")
        || path.rsplit_once("#page=").is_some_and(|(f, n)| {
            f.to_ascii_lowercase().ends_with(".pdf") && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

pub fn by_path(path: &str) -> Option<Lang> {
    if is_document_page(path) {
        return Some(Lang::Markdown);
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "rakefile" | "gemfile" | "guardfile" | "podfile" | "vagrantfile" | "brewfile" => return Some(Lang::Ruby),
        "cmakelists.txt" | "makefile" | "dockerfile" => return Some(Lang::Text),
        ".bashrc" | ".bash_profile" | ".profile" | ".zshrc" | "pkgbuild" => return Some(Lang::Bash),
        _ => {}
    }
    let ext = match lower.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext,
        _ => return None,
    };
    Some(match ext {
        "cs" | "csx" => Lang::CSharp,
        "py" | "pyi" | "pyw" => Lang::Python,
        "ts" | "mts" | "cts" => Lang::TypeScript,
        "tsx" => Lang::Tsx,
        "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
        "c" => Lang::C,
        "h" => return None, // decided by content: C, C++ or Objective-C
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "inl" | "tpp" | "cu" | "cuh" => Lang::Cpp,
        "m" | "mm" => Lang::ObjC,
        "go" => Lang::Go,
        "rs" => Lang::Rust,
        "java" => Lang::Java,
        "rb" | "rake" | "gemspec" | "ru" => Lang::Ruby,
        "php" | "phtml" | "php5" | "php7" | "phps" => Lang::Php,
        "kt" | "kts" => Lang::Kotlin,
        "swift" => Lang::Swift,
        "scala" | "sc" | "sbt" => Lang::Scala,
        "lua" => Lang::Lua,
        "sh" | "bash" | "zsh" | "ksh" | "bats" => Lang::Bash,
        "sql" | "psql" | "pgsql" => Lang::Sql,
        "md" | "markdown" | "mdx" | "rst" | "adoc" | "asciidoc" | "org" => Lang::Markdown,
        "json" | "jsonc" | "json5" | "ipynb" | "geojson" => Lang::Json,
        "yaml" | "yml" => Lang::Yaml,
        "toml" => Lang::Toml,
        _ => Lang::Text,
    })
}

/// Final language decision given the content (shebangs for extensionless files, `.h` dialects).
pub fn detect(path: &str, content: &[u8]) -> Lang {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    if name.ends_with(".h") {
        return header_dialect(content);
    }
    if let Some(lang) = by_path(path) {
        return lang;
    }
    shebang(content).unwrap_or(Lang::Text)
}

fn shebang(content: &[u8]) -> Option<Lang> {
    let first = content.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?;
    let rest = line.strip_prefix("#!")?;
    // "#!/usr/bin/env -S python3 -u" and "#!/bin/bash" alike: the interpreter is the first word
    // after an optional env.
    let mut words = rest.split_whitespace().map(|w| w.rsplit('/').next().unwrap_or(w));
    let mut interp = words.next()?;
    if interp == "env" {
        interp = words.find(|w| !w.starts_with('-'))?;
    }
    let interp = interp.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match interp {
        "sh" | "bash" | "zsh" | "ksh" | "dash" => Lang::Bash,
        "python" => Lang::Python,
        "node" | "nodejs" | "deno" | "bun" => Lang::JavaScript,
        "ruby" => Lang::Ruby,
        "php" => Lang::Php,
        "lua" | "luajit" => Lang::Lua,
        "ts-node" | "tsx" => Lang::TypeScript,
        _ => return None,
    })
}

/// `.h`: Objective-C when it declares `@interface`/`@protocol`, C++ when it has C++-only syntax,
/// else C.
fn header_dialect(content: &[u8]) -> Lang {
    let text = crate::encoding::text(&content[..content.len().min(256 * 1024)]);
    let mut cpp = false;
    for line in text.lines() {
        let l = line.trim_start();
        if l.starts_with("@interface") || l.starts_with("@protocol") || l.starts_with("@implementation") {
            return Lang::ObjC;
        }
        if !cpp
            && (l.starts_with("class ")
                || l.starts_with("namespace ")
                || l.starts_with("template")
                || l.starts_with("public:")
                || l.starts_with("private:")
                || l.starts_with("protected:")
                || l.starts_with("using namespace")
                || l.contains("std::")
                || l.starts_with("virtual ")
                || l.contains("constexpr ")
                || (l.starts_with("#include <") && !l.contains(".h>")))
        {
            cpp = true;
        }
    }
    if cpp { Lang::Cpp } else { Lang::C }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_dialects() {
        assert_eq!(detect("a/x.h", b"int add(int a, int b);\n"), Lang::C);
        assert_eq!(detect("a/x.h", b"#pragma once\nnamespace foo {\nclass Bar {};\n}\n"), Lang::Cpp);
        assert_eq!(
            detect("a/x.h", b"#import <Foundation/Foundation.h>\n@interface Foo : NSObject\n@end\n"),
            Lang::ObjC
        );
        assert_eq!(detect("x.h", b"#include <vector>\nint f();\n"), Lang::Cpp);
    }

    #[test]
    fn extensions_and_shebangs() {
        assert_eq!(detect("src/main.rs", b""), Lang::Rust);
        assert_eq!(detect("web/App.tsx", b""), Lang::Tsx);
        assert_eq!(detect("bin/tool", b"#!/usr/bin/env python3\nprint(1)\n"), Lang::Python);
        assert_eq!(detect("bin/run", b"#!/bin/bash\necho hi\n"), Lang::Bash);
        assert_eq!(detect("README", b"hello\n"), Lang::Text);
        assert_eq!(detect("docs/guide.md", b""), Lang::Markdown);
        assert_eq!(detect("Rakefile", b""), Lang::Ruby);
        assert_eq!(detect(".gitignore", b"target\n"), Lang::Text);
    }

    #[test]
    fn source_without_a_grammar_is_code_not_prose() {
        for path in ["src/Text/Pandoc/Error.hs", "lib/phoenix/channel.ex", "src/analysis.zig", "lib/x.ML"] {
            assert_eq!(detect(path, b""), Lang::Text, "{path} is split as text");
            assert!(is_code_file(detect(path, b""), path), "{path} is code");
        }
        for path in ["README", "notes.txt", "docs/guide.md", "m4/ax_pthread.m4", ".hs", "CMakeLists.txt"] {
            assert!(!is_code_file(detect(path, b""), path), "{path} is not code");
        }
        assert!(is_code_file(Lang::Rust, "src/main.rs"));
    }
}
