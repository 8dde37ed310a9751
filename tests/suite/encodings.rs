//! Files in legacy text encodings are indexed by their text, with citations on the right
//! lines; minified files and lockfiles are left out unless the repository keeps them.

use crate::common;
use common::*;

fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
    let mut out = if big_endian { vec![0xFE, 0xFF] } else { vec![0xFF, 0xFE] };
    for u in text.encode_utf16() {
        out.extend(if big_endian { u.to_be_bytes() } else { u.to_le_bytes() });
    }
    out
}

fn hit_on(r: &TestRepo, query: &str, path: &str) -> serde_json::Value {
    let v = r.json(&["--no-dense", "search", query, "-k", "5"]);
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == path)
        .cloned()
        .unwrap_or_else(|| panic!("no hit on {path} for {query:?}: {v}"))
}

#[test]
fn legacy_encodings_are_searchable_with_their_lines() {
    let r = TestRepo::new();
    // Line 4 holds the searched word in each file.
    let le =
        "using System;\n\nclass Lecteur {\n    // réessayer la connexion après une panne\n    void Relire() {}\n}\n";
    r.write_bytes("src/Lecteur.cs", &utf16(le, false));
    let be = "using System;\n\nclass Ecrivain {\n    // sauvegarde périodique du journal\n    void Ecrire() {}\n}\n";
    r.write_bytes("src/Ecrivain.cs", &utf16(be, true));
    let latin = "#include <stdio.h>\n\n/* Gérer les données reçues: déjà traité, façade élégante */\nint décompresser_archive(void) { return 0; } /* à côté */\n";
    let (cp1252, _, _) = encoding_rs::WINDOWS_1252.encode(latin);
    r.write_bytes("src/archive.c", &cp1252);
    let chinese = "#include <stdio.h>\n\n// 這是一個處理網路連線的模組，負責讀取設定檔並建立資料庫連線。\nint reconnect_database(void) { return 0; } // 錯誤時會重新嘗試三次，然後回報給使用者。\n";
    let (big5, _, _) = encoding_rs::BIG5.encode(chinese);
    r.write_bytes("src/conn.c", &big5);
    r.commit_all("legacy encodings");

    let h = hit_on(&r, "réessayer connexion", "src/Lecteur.cs");
    assert!(h["text"].as_str().unwrap().contains("réessayer la connexion"), "{h}");
    assert!(h["start_line"].as_u64().unwrap() <= 4 && h["end_line"].as_u64().unwrap() >= 4, "{h}");
    let h = hit_on(&r, "sauvegarde journal", "src/Ecrivain.cs");
    assert!(h["text"].as_str().unwrap().contains("périodique"), "{h}");
    let h = hit_on(&r, "décompresser_archive", "src/archive.c");
    assert!(h["text"].as_str().unwrap().contains("données reçues"), "{h}");
    let h = hit_on(&r, "reconnect_database", "src/conn.c");
    assert!(h["text"].as_str().unwrap().contains("資料庫連線"), "{h}");

    // Exact search answers from the blobs, decoded the same way, on the right line.
    let v = r.json(&["search", "--exact", "資料庫連線"]);
    let m = &v["matches"][0];
    assert_eq!((m["path"].as_str(), m["line"].as_u64()), (Some("src/conn.c"), Some(3)), "{v}");
    let v = r.json(&["search", "--exact", "réessayer"]);
    assert_eq!(
        (v["matches"][0]["path"].as_str(), v["matches"][0]["line"].as_u64()),
        (Some("src/Lecteur.cs"), Some(4)),
        "{v}"
    );

    // The graph sees the decoded text too: the UTF-16 class is a definition.
    let v = r.json(&["--no-dense", "find-definition", "Lecteur"]);
    assert_eq!(
        (v["results"][0]["path"].as_str(), v["results"][0]["start_line"].as_u64()),
        (Some("src/Lecteur.cs"), Some(3)),
        "{v}"
    );

    // doctor --path names the encoding it decoded from.
    let t = r.text(&["doctor", "--path", "src/conn.c"]);
    assert!(t.contains("decoded from Big5"), "{t}");
    let t = r.text(&["doctor", "--path", "src/Ecrivain.cs"]);
    assert!(t.contains("decoded from UTF-16BE"), "{t}");
}

#[test]
fn minified_files_and_lockfiles_are_left_out_unless_kept() {
    let r = TestRepo::new();
    let app = "function fetchOrders(client) {\n  return client.get('/orders');\n}\n";
    r.write("web/app.js", app);
    r.write("web/app.min.js", "function fetchOrders(n){return n.get('/orders')}");
    r.write("web/vendor.min.js", "function fetchOrders(n){return n.get('/orders')}");
    r.write("package-lock.json", "{\"name\": \"fetchOrders\", \"lockfileVersion\": 3}\n");
    r.write(".gitattributes", "web/vendor.min.js -linguist-generated\n");
    r.commit_all("web");
    let paths = r.search_paths(&["--no-dense", "fetchOrders", "-k", "10"]);
    assert!(paths.contains(&"web/app.js".to_string()), "{paths:?}");
    assert!(!paths.contains(&"web/app.min.js".to_string()), "minified file left out: {paths:?}");
    assert!(!paths.contains(&"package-lock.json".to_string()), "lockfile left out: {paths:?}");
    assert!(paths.contains(&"web/vendor.min.js".to_string()), "-linguist-generated keeps it: {paths:?}");
    let t = r.text(&["doctor", "--path", "web/app.min.js"]);
    assert!(t.contains("not indexed") && t.contains("minified"), "{t}");
}
