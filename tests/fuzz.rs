//! A bounded, reproducible fuzzing harness for the decoders of untrusted input: segments (the
//! Parquet files a pack, a remote or an alternate brings), packs, the trees a remote's
//! `refs/lynx/objects` holds, and MCP requests. Mutations of the committed corpus
//! (`tests/fixtures/fuzz`) come from a fixed seed, so every run tries the same inputs and a
//! failure reproduces; the process limits its own address space first, so a decoder that let
//! a bomb through fails here (an allocation failure) instead of taking the machine down.
//! Every input must end in an answer or an error — never a panic, an abort or a hang.
//! The PDF stream decoder (crates/docs/src/pdf_stream.rs, std and flate2 only) is compiled
//! in here as it is, so a core build fuzzes it too.

mod common;
use common::*;
use std::path::{Path, PathBuf};

#[path = "../crates/docs/src/pdf_stream.rs"]
#[allow(dead_code)]
mod pdf_stream;

/// xorshift64*: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that break length and count fields.
const INTERESTING: &[&[u8]] = &[
    &[0],
    &[0xff],
    &[0x7f],
    &[0x80],
    &[0xff, 0xff, 0xff, 0x7f],
    &[0xff, 0xff, 0xff, 0xff, 0x0f],
    &[0x15, 0x00],
    &[0x19, 0xfc],
];

/// One mutation of `input`: flipped bits, interesting bytes, cut or repeated spans.
fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        if v.is_empty() {
            v.push(0);
        }
        let at = rng.below(v.len());
        match rng.below(6) {
            0 => v[at] ^= 1 << rng.below(8),
            1 => v[at] = rng.next() as u8,
            2 => {
                let x = INTERESTING[rng.below(INTERESTING.len())];
                for (i, b) in x.iter().enumerate() {
                    if at + i < v.len() {
                        v[at + i] = *b;
                    }
                }
            }
            3 => {
                let end = (at + 1 + rng.below(64)).min(v.len());
                v.drain(at..end);
            }
            4 => {
                let end = (at + 1 + rng.below(64)).min(v.len());
                let span = v[at..end].to_vec();
                v.splice(at..at, span);
            }
            _ => v.truncate(at),
        }
    }
    v
}

/// The test process may use at most this much address space.
fn limit_memory() {
    let limit = 6u64 << 30;
    let rl = libc::rlimit { rlim_cur: limit, rlim_max: limit };
    // SAFETY: plain system call on a valid struct.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &rl);
    }
}

fn corpus(dir: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz").join(dir);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| (e.path(), std::fs::read(e.path()).unwrap()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "the corpus {} is empty", root.display());
    out
}

fn no_panic<T>(what: &str, input: &[u8], f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        let dump = std::env::temp_dir().join(format!("lynx-fuzz-{what}.bin"));
        let _ = std::fs::write(&dump, input);
        panic!("{what} panicked on a mutated input (saved to {})", dump.display())
    })
}

#[test]
fn segment_decoders_survive_mutated_segments() {
    limit_memory();
    let seeds = corpus("segments");
    let scratch = tempfile::tempdir().unwrap();
    // Not under an object directory's layout, so the decoder (not the name check) sees it.
    let file = scratch.path().join("input.parquet");
    let mut rng = Rng(0x5eed_0001);
    let (mut decoded, mut refused) = (0, 0);
    for i in 0..20_000 {
        let (_, seed) = &seeds[i % seeds.len()];
        let input = mutate(&mut rng, seed);
        let bytes = bytes::Bytes::from(input.clone());
        no_panic("budget-check", &input, || lynx_core::store::budget::check(&bytes).is_ok());
        no_panic("scan", &input, || lynx_core::store::pack::scan_bytes(bytes.clone()).is_ok());
        std::fs::write(&file, &input).unwrap();
        match no_panic("decode", &input, || lynx_core::store::read_segment_with_meta(&file)) {
            Ok(_) => decoded += 1,
            Err(_) => refused += 1,
        }
    }
    // The mutations reach both sides: some inputs still decode, most are refused.
    assert!(decoded > 0 && refused > 0, "decoded {decoded}, refused {refused}");
}

#[test]
fn pack_reader_survives_mutated_packs() {
    limit_memory();
    let seeds = corpus(".");
    let pack = seeds
        .iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "lynxpack"))
        .expect("a pack in the corpus")
        .1
        .clone();
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("input.lynxpack");
    let mut rng = Rng(0x5eed_0002);
    let mut ok = 0;
    for i in 0..3000 {
        let input = mutate(&mut rng, &pack);
        std::fs::write(&file, &input).unwrap();
        let staging = scratch.path().join(format!("staging-{i}"));
        std::fs::create_dir_all(&staging).unwrap();
        let accept = |_: &str, _: &str| true;
        if no_panic("pack", &input, || lynx_core::store::pack::read_checked(&file, &accept, &staging)).is_ok() {
            ok += 1;
        }
        no_panic("pack-extra", &input, || lynx_core::store::pack::read_extra(&file).is_ok());
        let _ = std::fs::remove_dir_all(&staging);
    }
    // Tar headers carry checksums, so many mutations are refused; some pass untouched spans.
    assert!(ok > 0, "no mutated pack was readable");
}

#[test]
fn fetch_survives_hostile_trees_on_the_remote() {
    let r = TestRepo::new();
    seed_project(&r, 2);
    r.commit_all("first");
    let remote = tempfile::tempdir().unwrap();
    let sh = |script: &str| -> String {
        let mut c = std::process::Command::new("bash");
        c.args(["-c", script]).current_dir(remote.path());
        isolate(&mut c);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    sh("git init -q --bare");
    let mut rng = Rng(0x5eed_0003);
    let seeds = corpus("segments");
    for round in 0..12 {
        // A tree of random entries: names of every shape, blobs that are segments, mutated
        // segments or junk, modes of every kind.
        let mut entries = Vec::new();
        for _ in 0..1 + rng.below(6) {
            let data = match rng.below(3) {
                0 => seeds[rng.below(seeds.len())].1.clone(),
                1 => {
                    let pick = rng.below(seeds.len());
                    mutate(&mut rng, &seeds[pick].1)
                }
                _ => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
            };
            let tmp = remote.path().join("blob.tmp");
            std::fs::write(&tmp, &data).unwrap();
            let blob = sh("git hash-object -w blob.tmp");
            let hex: String =
                (0..[62, 61, 63, 300, 2][rng.below(5)]).map(|_| b"0123456789abcdef"[rng.below(16)] as char).collect();
            let name = match rng.below(4) {
                0 => format!("{hex}.parquet"),
                1 => format!("{hex}.PARQUET"),
                2 => format!("{}.parquet", &blake3::hash(&data).to_hex().as_str()[2..]),
                _ => "x y.parquet".to_string(),
            };
            let mode = ["100644", "100755", "120000"][rng.below(3)];
            entries.push(format!("{mode} blob {blob}\t{name}"));
        }
        let sub = sh(&format!(
            "printf '%s\\n' {} | git mktree",
            entries.iter().map(|e| format!("'{e}'")).collect::<Vec<_>>().join(" ")
        ));
        let dir = ["ab", "AB", "a", "abc", "zz"][rng.below(5)];
        let top = sh(&format!(
            "printf '040000 tree {sub}\\t{dir}\\n100644 blob {}\\tREADME\\n' | git mktree",
            sh("echo hi | git hash-object -w --stdin")
        ));
        let commit = sh(&format!("git commit-tree {top} -m round{round}"));
        sh(&format!("git update-ref refs/lynx/objects {commit}"));
        let out = r.lynx(&["--no-dense", "--json", "fetch", remote.path().to_str().unwrap()]);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "round {round}: fetch ended with {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("round {round}: not one JSON object ({e})"));
        assert!(v["ok"].is_boolean(), "{v}");
    }
    // The store still answers.
    assert!(r.search_paths(&["--no-dense", "handle request"]).iter().any(|p| p.starts_with("src/mod")));
}

/// A random JSON value of the shapes agents send by mistake (and attackers on purpose).
fn value(rng: &mut Rng, depth: usize) -> serde_json::Value {
    use serde_json::json;
    match rng.below(if depth > 3 { 6 } else { 9 }) {
        0 => json!(null),
        1 => json!(rng.below(2) == 0),
        2 => json!([0i64, -1, 1 << 40, i64::MAX, i64::MIN][rng.below(5)]),
        3 => json!([0.5f64, -1e308, 1e308][rng.below(3)]),
        4 => json!(
            ["", "x", "../../etc/passwd", "\u{1b}]0;t\u{7}", "HEAD~99999", "a\nb", "*", "[", "\u{202e}"][rng.below(9)]
        ),
        5 => json!("s".repeat(rng.below(3) * 5000)),
        6 => serde_json::Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        _ => {
            let keys = [
                "query",
                "symbol",
                "n_results",
                "top_k",
                "rev",
                "base",
                "mode",
                "glob",
                "path",
                "cursor",
                "out",
                "relation",
                "depth",
                "changes",
                "budget",
                "code",
                "queries",
                "source",
                "explain",
                "zzz",
            ];
            serde_json::Value::Object(
                (0..rng.below(5)).map(|_| (keys[rng.below(keys.len())].to_string(), value(rng, depth + 1))).collect(),
            )
        }
    }
}

#[test]
fn the_mcp_server_answers_every_mutated_request() {
    use std::io::{BufRead, Write};
    let r = TestRepo::new();
    calc_project(&r);
    let mut c = common::mcp::Client::start(&r, &["--profile", "full", "--no-watch"]);
    let tools: Vec<String> = c.request("tools/list", serde_json::json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let mut rng = Rng(0x5eed_0004);
    for i in 0..1000u64 {
        let id = 10_000 + i;
        let line = match rng.below(10) {
            // Not JSON, or JSON-RPC with the wrong shape: the parse error must carry no id
            // we wait for, so these only must not kill the server.
            0 => {
                let junk: Vec<u8> = mutate(&mut rng, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
                let s = String::from_utf8_lossy(&junk).replace('\n', " ");
                let stdin = c.stdin.as_mut().unwrap();
                writeln!(stdin, "{s}").unwrap();
                continue;
            }
            _ => {
                let tool =
                    if rng.below(8) == 0 { "no_such_tool".to_string() } else { tools[rng.below(tools.len())].clone() };
                let args = if rng.below(6) == 0 { value(&mut rng, 3) } else { value(&mut rng, 0) };
                serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}})
            }
        };
        let stdin = c.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut l = String::new();
            assert!(c.stdout.read_line(&mut l).unwrap() > 0, "the server closed stdout after {line}");
            let v: serde_json::Value =
                serde_json::from_str(&l).unwrap_or_else(|e| panic!("stdout carried a non-JSON-RPC line ({e}): {l}"));
            if v["id"] == id {
                assert!(v["result"].is_object() || v["error"].is_object(), "{v}");
                break;
            }
        }
    }
    // Still healthy afterwards.
    let (text, err) = c.call("search", serde_json::json!({"query": "add numbers"}));
    assert!(!err && text.contains("calc.py"), "{text}");
    assert!(c.close().success());
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

#[test]
fn the_pdf_stream_decoder_survives_mutated_streams_within_its_limit() {
    use pdf_stream::{DecodeError, Params, decode};
    limit_memory();
    let text = b"BT /F1 12 Tf 72 720 Td (Turbine maintenance schedule) Tj ET\n".repeat(40);
    let once = zlib(&text);
    let a85: Vec<u8> = once
        .chunks(4)
        .flat_map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            let mut v = u32::from_be_bytes(b) as u64;
            let mut d = [0u8; 5];
            for x in d.iter_mut().rev() {
                *x = (v % 85) as u8 + b'!';
                v /= 85;
            }
            d[..c.len() + 1].to_vec()
        })
        .chain(*b"~>")
        .collect();
    let hex: Vec<u8> = text.iter().flat_map(|b| format!("{b:02x}").into_bytes()).chain(*b">").collect();
    let mut rows = Vec::new();
    for r in 0..16u8 {
        rows.push(r % 5);
        rows.extend((0..12).map(|i| i * r));
    }
    let zeros = zlib(&vec![0u8; 16 << 20]);
    let png = Params { predictor: 12, columns: 12, ..Params::default() };
    // (filters, parameters, encoded): one seed per filter and chain, a predictor, a bomb; the
    // LZW seed is the PDF specification's example.
    let seeds: Vec<(Vec<&[u8]>, Option<Params>, Vec<u8>)> = vec![
        (vec![b"FlateDecode"], None, once.clone()),
        (vec![b"FlateDecode", b"FlateDecode"], None, zlib(&once)),
        (vec![b"ASCII85Decode", b"FlateDecode"], None, a85),
        (vec![b"ASCIIHexDecode"], None, hex),
        (vec![b"RunLengthDecode"], None, vec![3, b'a', b'b', b'c', b'd', 250, b'z', 128]),
        (vec![b"LZWDecode"], None, vec![0x80, 0x0b, 0x60, 0x50, 0x22, 0x0c, 0x0c, 0x85, 0x01]),
        (vec![b"FlateDecode"], Some(png), zlib(&rows)),
        (vec![b"FlateDecode"], None, zeros),
    ];
    let names: [&[u8]; 8] = [
        b"FlateDecode",
        b"LZWDecode",
        b"ASCII85Decode",
        b"ASCIIHexDecode",
        b"RunLengthDecode",
        b"Fl",
        b"DCTDecode",
        b"X",
    ];
    let mut rng = Rng(0x5eed_0005);
    let (mut decoded, mut too_large, mut refused) = (0, 0, 0);
    for i in 0..20_000 {
        let (filters, params, seed) = &seeds[i % seeds.len()];
        let input = mutate(&mut rng, seed);
        let mut filters = filters.clone();
        if rng.below(8) == 0 {
            filters.push(names[rng.below(names.len())]);
        }
        let mut params = *params;
        if rng.below(8) == 0 {
            params = Some(Params {
                predictor: [1, 2, 10, 12, 15, -1][rng.below(6)],
                colors: [0, 1, 3, 4, 33, i64::MAX][rng.below(6)],
                bits_per_component: [1, 8, 16, 0, -8][rng.below(5)],
                columns: [0, 1, 7, 1 << 20, i64::MIN][rng.below(5)],
                early_change: rng.below(2) == 0,
            });
        }
        let limit = [0usize, 1, 100, 4096, 1 << 20][rng.below(5)];
        let all = vec![params; filters.len()];
        match no_panic("pdf-stream", &input, || decode(&filters, &all, &input, limit)) {
            Ok(out) => {
                assert!(out.len() <= limit, "{} bytes past the limit {limit}", out.len());
                decoded += 1;
            }
            Err(DecodeError::TooLarge) => too_large += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(decoded > 0 && too_large > 0 && refused > 0, "decoded {decoded}, too large {too_large}, refused {refused}");
}
