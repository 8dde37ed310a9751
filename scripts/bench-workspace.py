#!/usr/bin/env python3
"""A workspace of many repositories, measured: cold index of the whole workspace, the server's
memory, search latency across all repositories against one repository alone, and retrieval of
the merged ranking against asking the right repository alone.

Usage:
  scripts/bench-workspace.py REPOS_DIR OUT_DIR [--questions DIR] [--bin PATH]

REPOS_DIR holds clones at their pinned commits (scripts/bench-repos.sh). Each is cloned again
into OUT_DIR with `git clone --shared` (its objects borrowed, a fresh checkout and no `.lynx`),
a workspace file listing them is written to OUT_DIR/lynx-workspace.toml, then:

  1. `git lynx --workspace FILE index` (cold: every repository's objects made from nothing), timed;
  2. `git lynx --workspace FILE serve` started (watching every working tree, as users run it);
     once ready, its resident memory;
  3. every question of DIR/<repo>.questions.json (the annotated sets, default docs/eval/annotated)
     for a repository of the workspace asked twice over MCP: across the whole workspace, and with
     `repo` naming its repository; per call the latency, and whether an expected file of that
     repository is among the first 10 hits (recall@10: the share of expected files found);
  4. the same questions again to a server held to `serve.max_memory_mb` (--bound-mb, default
     150, through a user configuration file in a temporary LYNX_CONFIG_HOME): its memory and
     latency while it lets go of the repositories asked least recently.

Prints one JSON report (and a Markdown summary on stderr). Dense retrieval follows LYNX_MODEL
(set it to a local model folder, or `none`).
"""

import json
import os
import statistics
import subprocess
import sys
import time


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


class Server:
    def __init__(self, bin_, cwd, args, env=None):
        self.p = subprocess.Popen([bin_] + args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
        self.next = 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def request(self, method, params):
        i = self.next
        self.next += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            v = json.loads(line)
            if v.get("id") == i:
                return v

    def call(self, tool, args):
        v = self.request("tools/call", {"name": tool, "arguments": args})
        if "result" not in v:
            raise RuntimeError(f"{tool}: {v}")
        return v["result"]

    def rss_mb(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            fields = dict(l.split(":", 1) for l in f if ":" in l)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def main():
    argv = sys.argv[1:]
    opts = {"--questions": "docs/eval/annotated", "--bin": "target/release/git-lynx", "--bound-mb": "150"}
    pos = []
    while argv:
        a = argv.pop(0)
        if a in opts:
            opts[a] = argv.pop(0)
        else:
            pos.append(a)
    repos_dir, out = pos
    bin_ = os.path.abspath(opts["--bin"])
    qdir = os.path.abspath(opts["--questions"])
    os.makedirs(out, exist_ok=True)
    names = sorted(n for n in os.listdir(repos_dir) if os.path.isdir(os.path.join(repos_dir, n, ".git")))
    lines = []
    for n in names:
        src = os.path.join(repos_dir, n)
        dst = os.path.join(out, n)
        if not os.path.isdir(dst):
            head = sh(["git", "-C", src, "rev-parse", "HEAD"]).stdout.strip()
            sh(["git", "clone", "-q", "--shared", "--no-checkout", src, dst])
            sh(["git", "-C", dst, "checkout", "-q", "--detach", head])
        lines.append(f'[[repo]]\npath = "{n}"\n')
    ws = os.path.join(out, "lynx-workspace.toml")
    with open(ws, "w") as f:
        f.write("\n".join(lines))
    files = {n: int(sh(["git", "-C", os.path.join(out, n), "ls-files"]).stdout.count("\n")) for n in names}

    t = time.time()
    r = subprocess.run([bin_, "--json", "--workspace", ws, "index"], cwd=out, capture_output=True, text=True)
    index_s = time.time() - t
    if r.returncode != 0:
        sys.exit(f"index failed: {r.stdout}\n{r.stderr}")
    indexed = json.loads(r.stdout)
    store_bytes = {}
    for n in names:
        total = 0
        for root, _, fs in os.walk(os.path.join(out, n, ".lynx", "objects")):
            total += sum(os.path.getsize(os.path.join(root, x)) for x in fs)
        store_bytes[n] = total

    def ask_all(s):
        rows = []
        for n in names:
            qf = os.path.join(qdir, f"{n}.questions.json")
            if not os.path.exists(qf):
                continue
            d = json.load(open(qf))
            for q in (d["questions"] if isinstance(d, dict) else d):
                expected = set(q["expected"]["files"])
                row = {"repo": n, "id": q["id"], "split": q.get("split", "")}
                for label, args in (("all", {"query": q["query"], "n_results": 10}),
                                    ("alone", {"query": q["query"], "n_results": 10, "repo": n})):
                    t = time.time()
                    res = s.call("search", args)
                    row[f"{label}_ms"] = (time.time() - t) * 1000
                    hits = res.get("structuredContent", {}).get("results", [])
                    got = {h["path"] for h in hits if h.get("source", n) == n}
                    row[f"{label}_recall"] = len(expected & got) / len(expected) if expected else 0.0
                rows.append(row)
        return rows

    def ready(s):
        while "being prepared" in json.dumps(s.call("get_rag_status", {})):
            time.sleep(0.2)

    t = time.time()
    s = Server(bin_, out, ["--workspace", ws, "serve", "--profile", "full"])
    ready(s)
    ready_s = time.time() - t
    rss_ready = s.rss_mb()
    rows = ask_all(s)
    rss_after = s.rss_mb()
    s.close()

    # The same questions to a server held to a memory bound (the user's own configuration).
    bound_mb = int(opts["--bound-mb"])
    home = os.path.join(out, "bounded-config")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f"[serve]\nmax_memory_mb = {bound_mb}\n")
    s = Server(bin_, out, ["--workspace", ws, "serve", "--profile", "full"], env={**os.environ, "LYNX_CONFIG_HOME": home})
    ready(s)
    bounded_rows = ask_all(s)
    rss_bounded = s.rss_mb()
    # What it holds once questions pause (the allocator returns freed memory after 30 s).
    time.sleep(35)
    rss_bounded_idle = s.rss_mb()
    s.close()

    def pct(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else 0

    report = {
        "repositories": len(names),
        "files": files,
        "index_seconds": round(index_s, 1),
        "blobs_new": indexed.get("blobs_new"),
        "objects_bytes": store_bytes,
        "serve_ready_seconds": round(ready_s, 2),
        "serve_rss_mb_ready": round(rss_ready[0]),
        "serve_rss_mb_after": round(rss_after[0]),
        "serve_peak_mb": round(rss_after[1]),
        "bounded": {"max_memory_mb": bound_mb, "rss_mb_after": round(rss_bounded[0]), "peak_mb": round(rss_bounded[1]),
                    "rss_mb_after_35s_idle": round(rss_bounded_idle[0]),
                    "search_all_ms": {"p50": round(pct([r["all_ms"] for r in bounded_rows], 50), 1),
                                      "p95": round(pct([r["all_ms"] for r in bounded_rows], 95), 1)},
                    "search_alone_ms": {"p50": round(pct([r["alone_ms"] for r in bounded_rows], 50), 1),
                                        "p95": round(pct([r["alone_ms"] for r in bounded_rows], 95), 1)}},
        "questions": len(rows),
        "search_all_ms": {"p50": round(pct([r["all_ms"] for r in rows], 50), 1),
                          "p95": round(pct([r["all_ms"] for r in rows], 95), 1)},
        "search_alone_ms": {"p50": round(pct([r["alone_ms"] for r in rows], 50), 1),
                            "p95": round(pct([r["alone_ms"] for r in rows], 95), 1)},
        "recall10_all": round(statistics.mean(r["all_recall"] for r in rows), 3) if rows else None,
        "recall10_alone": round(statistics.mean(r["alone_recall"] for r in rows), 3) if rows else None,
        "per_split": {sp: {"questions": sum(1 for r in rows if r["split"] == sp),
                           "recall10_all": round(statistics.mean(r["all_recall"] for r in rows if r["split"] == sp), 3),
                           "recall10_alone": round(statistics.mean(r["alone_recall"] for r in rows if r["split"] == sp), 3)}
                      for sp in sorted({r["split"] for r in rows})},
        "per_repo": {n: {"recall10_all": round(statistics.mean(r["all_recall"] for r in rows if r["repo"] == n), 3),
                         "recall10_alone": round(statistics.mean(r["alone_recall"] for r in rows if r["repo"] == n), 3)}
                     for n in sorted({r["repo"] for r in rows})},
    }
    print(json.dumps(report, indent=1))
    print(f"| repositories | files | cold index | objects | serve RSS | search all p50/p95 | one repo p50/p95 | recall@10 all / alone |",
          file=sys.stderr)
    print(f"| {len(names)} | {sum(files.values())} | {index_s:.0f} s | {sum(store_bytes.values()) / 1e6:.0f} MB | "
          f"{rss_after[0]:.0f} MB | {report['search_all_ms']['p50']} / {report['search_all_ms']['p95']} ms | "
          f"{report['search_alone_ms']['p50']} / {report['search_alone_ms']['p95']} ms | "
          f"{report['recall10_all']} / {report['recall10_alone']} |", file=sys.stderr)


if __name__ == "__main__":
    main()
