//! Chunk symbols, kinds and 1-based line ranges for every grammar, checked against hand-reviewed
//! expectations on the fixtures in tests/fixtures/lang.

use lynx_core::chunk::chunk;
use lynx_core::lang::detect;

fn check(file: &str, expected: &[(&str, &str, u32, u32)]) {
    let path = format!("{}/tests/fixtures/lang/{file}", env!("CARGO_MANIFEST_DIR"));
    let content = std::fs::read_to_string(&path).unwrap();
    let lang = detect(file, content.as_bytes());
    let got: Vec<(String, String, u32, u32)> =
        chunk(lang, &content).into_iter().map(|c| (c.symbol, c.kind, c.start_line, c.end_line)).collect();
    let want: Vec<(String, String, u32, u32)> =
        expected.iter().map(|(s, k, a, b)| (s.to_string(), k.to_string(), *a, *b)).collect();
    assert_eq!(got, want, "{file} ({})", lang.name());
    // Every chunk's text is exactly its lines.
    let lines: Vec<&str> = content.lines().collect();
    for c in chunk(lang, &content) {
        assert_eq!(c.text, lines[c.start_line as usize - 1..c.end_line as usize].join("\n"), "{file} {}", c.symbol);
    }
}

#[test]
fn sample_cs() {
    check(
        "Sample.cs",
        &[
            ("", "header", 1, 2),
            ("Game.Combat", "namespace", 4, 5),
            ("Game.Combat.IDamageable", "interface", 6, 7),
            ("Game.Combat.IDamageable.TakeDamage", "method", 8, 8),
            ("Game.Combat.Enemy", "class", 11, 12),
            ("Game.Combat.Enemy.Health", "property", 13, 13),
            ("Game.Combat.Enemy.Enemy", "constructor", 15, 18),
            ("Game.Combat.Enemy.TakeDamage", "method", 20, 24),
        ],
    );
}

#[test]
fn sample_java() {
    check(
        "Sample.java",
        &[
            ("", "header", 1, 4),
            ("Circle", "class", 6, 8),
            ("Circle.Circle", "constructor", 10, 12),
            ("Circle.area", "method", 14, 17),
            ("Circle.Visitor", "interface", 19, 19),
            ("Circle.Visitor.visit", "method", 20, 20),
        ],
    );
}

#[test]
fn sample_c() {
    check(
        "sample.c",
        &[
            ("", "header", 1, 2),
            ("point", "struct", 4, 6),
            ("square", "function", 8, 10),
            ("distance", "function", 12, 14),
            ("main", "function", 16, 19),
        ],
    );
}

#[test]
fn sample_cpp() {
    check(
        "sample.cpp",
        &[
            ("", "header", 1, 2),
            ("geo", "namespace", 4, 4),
            ("geo.Circle", "class", 6, 7),
            ("geo.Circle.Circle", "constructor", 8, 8),
            ("geo.Circle", "class", 9, 12),
            ("geo.Circle.area", "method", 14, 16),
            ("main", "function", 20, 23),
        ],
    );
}

#[test]
fn sample_go() {
    check(
        "sample.go",
        &[
            ("", "header", 1, 6),
            ("Point", "struct", 8, 11),
            ("Shape", "interface", 13, 15),
            ("Point.Distance", "method", 17, 20),
            ("Main", "function", 22, 25),
        ],
    );
}

#[test]
fn sample_js() {
    check(
        "sample.js",
        &[
            ("", "header", 1, 1),
            ("Animal", "class", 3, 3),
            ("Animal.speak", "method", 4, 6),
            ("run", "function", 9, 11),
            ("", "header", 13, 13),
        ],
    );
}

#[test]
fn sample_kt() {
    check(
        "sample.kt",
        &[
            ("", "header", 1, 4),
            ("Drawable", "interface", 6, 6),
            ("Drawable.draw", "method", 7, 7),
            ("Circle", "class", 10, 10),
            ("Circle.draw", "method", 11, 13),
            ("Circle.area", "method", 15, 17),
            ("Circle.Companion", "object", 19, 19),
            ("Circle.Companion.unit", "method", 20, 20),
            ("main", "function", 24, 26),
        ],
    );
}

#[test]
fn sample_lua() {
    check(
        "sample.lua",
        &[
            ("", "header", 1, 3),
            ("M.area", "function", 5, 7),
            ("M.describe", "function", 9, 11),
            ("helper", "function", 13, 15),
            ("", "header", 17, 17),
        ],
    );
}

#[test]
fn sample_m() {
    check(
        "sample.m",
        &[
            ("", "header", 1, 2),
            ("Circle", "interface", 4, 5),
            ("Circle.area", "method", 6, 6),
            ("Circle.scaleBy:andShift:", "method", 7, 7),
            ("Circle", "class", 10, 10),
            ("Circle.area", "method", 11, 13),
            ("Circle.scaleBy:andShift:", "method", 15, 18),
            ("main", "function", 21, 24),
        ],
    );
}

#[test]
fn sample_php() {
    check(
        "sample.php",
        &[
            ("", "header", 1, 1),
            ("App.Geo", "namespace", 2, 4),
            ("App.Geo.Circle", "class", 6, 8),
            ("App.Geo.Circle.__construct", "constructor", 10, 13),
            ("App.Geo.Circle.area", "method", 15, 18),
            ("App.Geo.main", "function", 21, 25),
        ],
    );
}

#[test]
fn sample_py() {
    check(
        "sample.py",
        &[
            ("", "header", 1, 5),
            ("Point", "class", 8, 11),
            ("Point.distance", "method", 13, 14),
            ("Point.origin", "method", 16, 18),
            ("main", "function", 21, 24),
        ],
    );
}

#[test]
fn sample_rb() {
    check(
        "sample.rb",
        &[
            ("", "header", 1, 2),
            ("Geo", "module", 4, 4),
            ("Geo.Circle", "class", 5, 6),
            ("Geo.Circle.initialize", "method", 8, 10),
            ("Geo.Circle.area", "method", 12, 14),
            ("Geo.Circle.unit", "method", 16, 18),
            ("main", "function", 22, 24),
        ],
    );
}

#[test]
fn sample_rs() {
    check(
        "sample.rs",
        &[
            ("", "header", 1, 2),
            ("Point", "struct", 4, 8),
            ("Point.new", "method", 11, 14),
            ("Point.distance", "method", 16, 18),
            ("Point.fmt", "method", 22, 24),
            ("Area", "trait", 27, 27),
            ("Area.area", "method", 28, 28),
            ("inner", "module", 31, 31),
            ("inner.deep", "function", 32, 32),
            ("main", "function", 35, 38),
        ],
    );
}

#[test]
fn sample_scala() {
    check(
        "sample.scala",
        &[
            ("", "header", 1, 4),
            ("Drawable", "trait", 6, 6),
            ("Drawable.draw", "method", 7, 7),
            ("Circle", "class", 10, 10),
            ("Circle.area", "method", 11, 11),
            ("Circle.draw", "method", 13, 15),
            ("Main", "object", 18, 18),
            ("Main.main", "method", 19, 21),
        ],
    );
}

#[test]
fn sample_sh() {
    check(
        "sample.sh",
        &[("", "header", 1, 3), ("build", "function", 5, 8), ("deploy", "function", 10, 13), ("", "header", 15, 15)],
    );
}

#[test]
fn sample_sql() {
    check("sample.sql", &[("users", "statement", 1, 5), ("users_name", "statement", 7, 7), ("", "statement", 9, 9)]);
}

#[test]
fn sample_swift() {
    check(
        "sample.swift",
        &[
            ("", "header", 1, 1),
            ("Shape", "protocol", 3, 3),
            ("Shape.area", "method", 4, 4),
            ("Circle", "class", 7, 8),
            ("Circle.init", "constructor", 10, 12),
            ("Circle.area", "method", 14, 16),
            ("Circle", "extension", 19, 19),
            ("Circle.describe", "method", 20, 22),
            ("main", "function", 25, 28),
        ],
    );
}

#[test]
fn sample_ts() {
    check(
        "sample.ts",
        &[
            ("", "header", 1, 2),
            ("Shape", "interface", 4, 6),
            ("Circle", "class", 8, 9),
            ("Circle.constructor", "constructor", 11, 14),
            ("Circle.area", "method", 16, 18),
            ("makeCircle", "function", 21, 23),
            ("main", "function", 25, 28),
        ],
    );
}

#[test]
fn sample_tsx() {
    check("sample.tsx", &[("", "header", 1, 1), ("Button", "function", 3, 5)]);
}
