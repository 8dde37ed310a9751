#!/usr/bin/env python3
"""The shared object store, measured: a "CI" clone of each repository indexes and pushes to one
store shared by all of them; a fresh "laptop" clone with the store configured then answers its
first question at HEAD and at HEAD~N, against a cold local index of the same clone.

Usage:
  scripts/bench-remote.py REPOS_DIR OUT_DIR [--repos a,b,...] [--back N] [--bin PATH] [--query Q]

REPOS_DIR holds clones at their pinned commits (scripts/bench-repos.sh); every repository there
is measured unless --repos names some. OUT_DIR (created; left for inspection) receives the
store (`OUT_DIR/store`, a file:// store), the clones (`git clone --shared`: objects borrowed, a
fresh checkout, no `.lynx`) and `report.json`. For each repository, in order:

  1. ci:     `index`, then `push --objects STORE --rev HEAD`, then `--rev HEAD~N` (the second
             push's `skipped` segments are the ones the two revisions share);
  2. cold:   a fresh clone without a store: `index --rev R` then `search --rev R Q`, at HEAD
             then at HEAD~N (the second is the incremental cost on top of the first), timed;
             its `.lynx/objects` size is the local store's;
  3. laptop: a fresh clone with LYNX_OBJECTS_URL=STORE: the same two first answers, timed, with
             what `index --json` says it downloaded and what it still computed (`blobs_new`);
             its answers are compared with the cold clone's.

Time to first answer is index + search wall time (a fresh clone's `search` would index the
same way first). Dense retrieval follows the environment (LYNX_MODEL, or the built-in model);
the vectors travel through the store like the other layers. Prints a Markdown table; the
figures are in OUT_DIR/report.json.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def sh(args, env=None, cwd=None):
    r = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r.stdout


def size(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def segments_in(store):
    seg = os.path.join(store, "segments")
    return {os.path.relpath(os.path.join(r, f), seg) for r, _, fs in os.walk(seg) for f in fs if f.endswith(".parquet")}


class Lynx:
    def __init__(self, binary, store=None):
        self.binary = binary
        self.env = dict(os.environ)
        self.env.pop("LYNX_OBJECTS_URL", None)
        self.env["LYNX_LOG"] = "warn"
        self.env["GIT_TERMINAL_PROMPT"] = "0"
        if store:
            self.env["LYNX_OBJECTS_URL"] = store

    def json(self, cwd, *args):
        return json.loads(sh([self.binary, "--json", *args], env=self.env, cwd=cwd))


def clone(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    sh(["git", "clone", "-q", "--shared", "--no-checkout", src, dst])
    head = sh(["git", "-C", src, "rev-parse", "HEAD"]).strip()
    sh(["git", "-C", dst, "checkout", "-q", "--detach", head])


def first_answer(lynx, cwd, rev, query):
    """index + search at `rev`: (seconds, index report, result paths)."""
    t0 = time.monotonic()
    idx = lynx.json(cwd, "index", "--rev", rev)
    hits = lynx.json(cwd, "search", "--rev", rev, query)
    t = time.monotonic() - t0
    return t, idx, [(r["path"], r.get("start_line")) for r in hits.get("results", [])]


def measure(name, src, out, store_url, args):
    back = f"HEAD~{args.back}"
    rec = {"repo": name}
    # The clones are detached at REPOS_DIR's HEAD, so HEAD~N is the same commit in each.
    rec["files"] = len(sh(["git", "-C", src, "ls-files"]).splitlines())
    blobs = {}
    for rev in ("HEAD", back):
        tree = sh(["git", "-C", src, "ls-tree", "-r", rev]).splitlines()
        blobs[rev] = {line.split()[2] for line in tree if line.split()[1] == "blob"}
    rec["blobs_head"], rec["blobs_back"] = len(blobs["HEAD"]), len(blobs[back])
    rec["blobs_shared_by_revisions"] = len(blobs["HEAD"] & blobs[back])
    rec["_blobs"] = blobs["HEAD"] | blobs[back]

    ci_dir = os.path.join(out, "ci", name)
    clone(src, ci_dir)
    ci = Lynx(args.bin)
    t0 = time.monotonic()
    ci.json(ci_dir, "index")
    p1 = ci.json(ci_dir, "push", "--objects", store_url, "--rev", "HEAD")
    p2 = ci.json(ci_dir, "push", "--objects", store_url, "--rev", back)
    rec["ci_seconds"] = time.monotonic() - t0
    rec["push_head"], rec["push_back"] = p1, p2
    rec["segments_head"] = p1["segments"]
    rec["segments_back"] = p2["segments"]
    rec["segments_shared_by_revisions"] = p2["skipped"]
    rec["segments_skipped_first_push"] = p1["skipped"]
    rec["ci_store_bytes"] = size(os.path.join(ci_dir, ".lynx", "objects"))

    answers = {}
    for mode, lynx in (("cold", Lynx(args.bin)), ("laptop", Lynx(args.bin, store_url))):
        d = os.path.join(out, mode, name)
        clone(src, d)
        for label, rev in (("head", "HEAD"), ("back", back)):
            t, idx, paths = first_answer(lynx, d, rev, args.query)
            remote = idx.get("remote") or {}
            rec[f"{mode}_{label}"] = {
                "seconds": t,
                "index_seconds": idx.get("seconds", {}).get("total"),
                "index_phases": idx.get("seconds"),
                "blobs_new": idx.get("blobs_new"),
                "blobs_fetched": idx.get("blobs_fetched"),
                "chunks_embedded": idx.get("chunks_embedded"),
                "downloaded_bytes": remote.get("bytes", 0),
                "downloaded_segments": remote.get("segments", 0),
                "remote_error": remote.get("error"),
                "refused": len(remote.get("refused", [])),
            }
            answers[(mode, label)] = paths
        rec[f"{mode}_store_bytes"] = size(os.path.join(d, ".lynx", "objects"))
    rec["same_answers"] = all(answers[("cold", l)] == answers[("laptop", l)] for l in ("head", "back"))
    return rec


def fmt_s(x):
    return f"{x:.2f}"


def fmt_b(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000


def table(recs, back, total_unique, in_store, shared_blobs):
    print(f"| repository | files | first answer at HEAD: cold / from store (ratio) | at HEAD~{back}: cold / from store | "
          "downloaded / cold local store | blobs computed on the laptop | segments HEAD / HEAD~N / shared | blobs HEAD / HEAD~N / shared | same answers |")
    print("|---|---:|---|---|---|---:|---|---|---|")
    for r in recs:
        ch, lh, cb, lb = r["cold_head"], r["laptop_head"], r["cold_back"], r["laptop_back"]
        down = lh["downloaded_bytes"] + lb["downloaded_bytes"]
        print(
            f"| {r['repo']} | {r['files']} | {fmt_s(ch['seconds'])} s / {fmt_s(lh['seconds'])} s "
            f"({lh['seconds'] / ch['seconds']:.2f}x) | {fmt_s(cb['seconds'])} s / {fmt_s(lb['seconds'])} s | "
            f"{fmt_b(down)} / {fmt_b(r['cold_store_bytes'])} ({down / max(r['cold_store_bytes'], 1):.2f}) | "
            f"{lh['blobs_new']} + {lb['blobs_new']} | {r['segments_head']} / {r['segments_back']} / "
            f"{r['segments_shared_by_revisions']} | {r['blobs_head']} / {r['blobs_back']} / "
            f"{r['blobs_shared_by_revisions']} | {'yes' if r['same_answers'] else 'NO'} |"
        )
    ratios = [r["laptop_head"]["seconds"] / r["cold_head"]["seconds"] for r in recs]
    print()
    print(f"Median time to first answer at HEAD, from the store vs cold: {statistics.median(ratios):.2f}x "
          f"(goal <= 0.25x). Store: {in_store} segments for {total_unique} segments the repositories' "
          f"revisions need ({total_unique - in_store} shared between repositories); {shared_blobs} git "
          f"blobs are identical files of several repositories.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repos_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--repos", help="comma-separated names (default: every clone in REPOS_DIR)")
    ap.add_argument("--back", type=int, default=50, help="the older revision is HEAD~BACK (default 50)")
    ap.add_argument("--bin", default=shutil.which("git-lynx") or "git-lynx")
    ap.add_argument("--query", default="where are errors handled")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin) if os.path.sep in args.bin else args.bin
    names = args.repos.split(",") if args.repos else sorted(
        n for n in os.listdir(args.repos_dir) if os.path.isdir(os.path.join(args.repos_dir, n, ".git")))
    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    store_dir = os.path.join(out, "store")
    if os.path.exists(store_dir):
        shutil.rmtree(store_dir)
    store_url = "file://" + store_dir
    recs = []
    for name in names:
        src = os.path.abspath(os.path.join(args.repos_dir, name))
        print(f"measuring {name}", file=sys.stderr)
        recs.append(measure(name, src, out, store_url, args))
    in_store = len(segments_in(store_dir))
    # Git blobs (identical files) found in more than one repository's two revisions.
    seen = {}
    for r in recs:
        for b in r.pop("_blobs"):
            seen[b] = seen.get(b, 0) + 1
    shared_blobs = sum(1 for n in seen.values() if n > 1)
    # Every segment each repository's two revisions need, counted once per repository.
    unique = sum(r["push_head"]["segments"] + r["push_back"]["segments"] - r["segments_shared_by_revisions"]
                 for r in recs)
    report = {
        "binary": args.bin,
        "back": args.back,
        "query": args.query,
        "store_segments": in_store,
        "store_bytes": size(store_dir),
        "segments_needed": unique,
        "blobs_in_several_repositories": shared_blobs,
        "repos": recs,
    }
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    table(recs, args.back, unique, in_store, shared_blobs)


if __name__ == "__main__":
    main()
