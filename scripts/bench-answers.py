#!/usr/bin/env python3
"""What an agent reads: the size of each MCP tool answer against the `git grep` a user would run.

Usage:
    scripts/bench-answers.py REPO QUESTIONS.json [--out RESULTS.json] [--timeout SECONDS]

Starts `$LYNX -C REPO serve --profile full --no-watch` (LYNX defaults to `git-lynx`), speaks MCP
JSON-RPC over its stdio (one JSON object per line), waits until the index answers, then asks
every question of QUESTIONS.json, a JSON list of

    {"id": "...", "tool": "search", "arguments": {...}, "need": "broad" | "exact",
     "expect": "substring" | ["all", "of", "these"], "grep": ["-i", "-E", "retry|backoff"]}

For each it records the characters of the text content and of the structured content
(`json.dumps(..., separators=(',', ':'))`), whether the text holds every `expect` string (and at
which character the first one starts: what matters should come first), and the characters of
`git grep -n <grep>` run in REPO. Rules:

    broad: grep / (text + structured) >= 5      (the answer is much smaller than the grep)
    exact: text + structured <= 2 * max(grep, EXACT_FLOOR)

EXACT_FLOOR (200 characters) stands for the one line an agent needs when grep prints nothing
(a name that is not defined anywhere): grep's empty output is not a size an answer can match.
A question whose answer misses its `expect` fails whatever its size.

Standard library only.
"""

import argparse
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict

BROAD_RATIO = 5.0
EXACT_FACTOR = 2.0
EXACT_FLOOR = 200
# A file path as answers print it (a root-level file too): known source and document suffixes.
PATH_RE = re.compile(
    r"(?<![\w/.])[\w@.+\[\]-]*(?:/[\w@.+\[\]-]+)*\."
    r"(?:go|py|pyi|ts|tsx|js|jsx|mjs|cjs|rs|java|kt|rb|php|cs|c|h|cc|cpp|hpp|swift|scala|md|json|toml|ya?ml)\b"
)
NOT_READY = ("still preparing the index", "retry in a few seconds")


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class Server:
    """One `git-lynx serve` child, spoken to over stdio."""

    def __init__(self, lynx, repo, stderr_path, extra):
        cmd = [lynx, "-C", repo, "serve", "--profile", "full", "--no-watch", *extra]
        self.err = open(stderr_path, "w")
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self.lines = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, msg):
        self.proc.stdin.write(compact(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params, timeout):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{method}: no answer within {timeout}s")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"{method}: the server exited (code {self.proc.poll()}); see its stderr log")
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                raise RuntimeError(f"the server wrote a line that is not JSON on stdout: {line[:200]!r}")
            if msg.get("id") == rid and ("result" in msg or "error" in msg):
                return msg
            # Notifications (progress, logs) and requests from the server are not answers.

    def initialize(self, timeout):
        r = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench-answers", "version": "1"},
            },
            timeout,
        )
        if "error" in r:
            raise RuntimeError(f"initialize failed: {r['error']}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r["result"]

    def call(self, tool, arguments, timeout):
        return self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self.err.close()


def text_of(result):
    return "".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


def wait_ready(server, timeout):
    """Asks get_rag_status until the server stops saying the index is still being prepared."""
    deadline = time.monotonic() + timeout
    while True:
        r = server.call("get_rag_status", {}, timeout=max(5, deadline - time.monotonic()))
        if "error" in r:
            raise RuntimeError(f"get_rag_status failed: {r['error']}")
        res = r["result"]
        text = text_of(res)
        if not (res.get("isError") and any(s in text for s in NOT_READY)):
            return text
        if time.monotonic() > deadline:
            raise TimeoutError(f"the index was not ready within {timeout}s: {text}")
        time.sleep(2)


def git_grep(repo, args):
    p = subprocess.run(
        ["git", "-C", repo, "grep", "-n", "--no-color", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    if p.returncode not in (0, 1):
        raise RuntimeError(f"git grep {args} failed: {p.stderr.strip()}")
    return p.stdout


def path_sizes(v, path="", out=None):
    """Characters of compact JSON at each path, list indices folded to [] and summed."""
    if out is None:
        out = Counter()
    if path:
        out[path] += len(compact(v))
    if isinstance(v, dict):
        for k, x in v.items():
            path_sizes(x, f"{path}.{k}" if path else k, out)
    elif isinstance(v, list):
        for x in v:
            path_sizes(x, f"{path}[]", out)
    return out


def dominant_fields(structured, n=4):
    """What makes the structured answer big: its largest lists (items, share) and leaf fields,
    and how much of it is key names (a per-item object repeats every key)."""
    sizes = path_sizes(structured)
    total = len(compact(structured)) or 1
    counts = Counter()

    def count(v, path=""):
        if isinstance(v, dict):
            for k, x in v.items():
                count(x, f"{path}.{k}" if path else k)
        elif isinstance(v, list):
            counts[path + "[]"] += len(v)
            for x in v:
                count(x, path + "[]")

    count(structured)
    lists = sorted(((p, s) for p, s in sizes.items() if p.endswith("[]")), key=lambda x: -x[1])
    parents = {p.rsplit(".", 1)[0] for p in sizes if "." in p} | {p[:-2] for p in sizes if p.endswith("[]")}
    leaves = sorted(((p, s) for p, s in sizes.items() if p not in parents and not p.endswith("[]")),
                    key=lambda x: -x[1])
    keys = sum(len(k) + 3 for k in key_names(structured))
    out = [f"list {p} x{counts[p]} {s} ({100 * s // total}%)" for p, s in lists[:2]]
    out += [f"{p} {s} ({100 * s // total}%)" for p, s in leaves[:n]]
    out.append(f"key names {keys} ({100 * keys // total}%)")
    return out


def key_names(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from key_names(x)
    elif isinstance(v, list):
        for x in v:
            yield from key_names(x)


def repeated_text(text):
    """Characters of text lines (trimmed, >= 20 chars) that repeat an earlier line."""
    seen = Counter(line.strip() for line in text.splitlines() if len(line.strip()) >= 20)
    return sum((c - 1) * (len(line) + 1) for line, c in seen.items() if c > 1)


def repeated_paths(text):
    """Characters spent repeating file paths in the text beyond their first mention, and the
    path repeated most (a caller's or a file's path written again on every line)."""
    counts = Counter(re.findall(PATH_RE, text))
    spent = {p: (c - 1) * len(p) for p, c in counts.items() if c > 1}
    if not spent:
        return 0, ""
    top = max(spent, key=spent.get)
    return sum(spent.values()), f"{top} x{counts[top]}"


def judge(q, text, structured_len, grep_len, found):
    total = len(text) + structured_len
    if q["need"] == "broad":
        ratio = grep_len / total if total else float("inf")
        ok_size = ratio >= BROAD_RATIO
        rule = f"grep/answer {ratio:.1f} >= {BROAD_RATIO:g}"
    else:
        limit = EXACT_FACTOR * max(grep_len, EXACT_FLOOR)
        ratio = grep_len / total if total else float("inf")
        ok_size = total <= limit
        rule = f"answer {total} <= {limit:.0f}"
    return ratio, ok_size and found, ok_size, rule


def run(repo, questions, lynx, timeout, extra, stderr_path):
    server = Server(lynx, repo, stderr_path, extra)
    rows = []
    try:
        info = server.initialize(timeout=120)
        t0 = time.monotonic()
        status = wait_ready(server, timeout)
        ready_s = time.monotonic() - t0
        for q in questions:
            t = time.monotonic()
            r = server.call(q["tool"], q.get("arguments", {}), timeout=timeout)
            secs = time.monotonic() - t
            if "error" in r:
                res = {"content": [{"type": "text", "text": f"JSON-RPC error: {r['error']}"}], "isError": True}
            else:
                res = r["result"]
            text = text_of(res)
            structured = res.get("structuredContent")
            s_len = len(compact(structured)) if structured is not None else 0
            grep_out = git_grep(repo, q["grep"])
            expect = q.get("expect", [])
            expect = [expect] if isinstance(expect, str) else expect
            found = all(e in text for e in expect) and not res.get("isError", False)
            at = min((text.find(e) for e in expect if e in text), default=-1)
            ratio, ok, ok_size, rule = judge(q, text, s_len, len(grep_out), found)
            rows.append(
                {
                    "id": q.get("id", f"{q['tool']}-{len(rows)}"),
                    "tool": q["tool"],
                    "need": q["need"],
                    "arguments": q.get("arguments", {}),
                    "text_chars": len(text),
                    "structured_chars": s_len,
                    "grep_chars": len(grep_out),
                    "grep_lines": grep_out.count("\n"),
                    "ratio": ratio,
                    "rule": rule,
                    "found": found,
                    "expect": expect,
                    "expect_at": at,
                    "grep_found": all(e in grep_out for e in expect),
                    "size_ok": ok_size,
                    "pass": ok,
                    "is_error": bool(res.get("isError")),
                    "cut": bool(isinstance(structured, dict) and structured.get("cut")),
                    "repeated_text_chars": repeated_text(text),
                    "repeated_path_chars": repeated_paths(text)[0],
                    "most_repeated_path": repeated_paths(text)[1],
                    "dominant_fields": dominant_fields(structured) if structured is not None else [],
                    "seconds": round(secs, 2),
                    "text": text,
                    "structured": structured,
                }
            )
    finally:
        server.close()
    server_name = info.get("serverInfo", {})
    return {
        "repo": repo,
        "server": server_name,
        "ready_seconds": round(ready_s, 1),
        "status": status,
        "rows": rows,
    }


def fmt_ratio(r):
    return "inf" if r == float("inf") else f"{r:.1f}"


def print_tables(report, out=sys.stdout):
    rows = report["rows"]
    w = out.write
    w(f"\n## {os.path.basename(os.path.abspath(report['repo']))}  (server {report['server'].get('version', '?')}, "
      f"index ready after {report['ready_seconds']}s)\n\n")
    w("| question | tool | need | text | structured | grep | grep/answer | found (at) | pass |\n")
    w("|---|---|---|---:|---:|---:|---:|---|---|\n")
    for r in rows:
        found = f"yes ({r['expect_at']})" if r["found"] else "NO"
        w(f"| {r['id']} | {r['tool']} | {r['need']} | {r['text_chars']} | {r['structured_chars']} | "
          f"{r['grep_chars']} | {fmt_ratio(r['ratio'])} | {found} | {'pass' if r['pass'] else 'FAIL'} |\n")


def per_tool(all_rows):
    by = defaultdict(list)
    for r in all_rows:
        by[(r["tool"], r["need"])].append(r)
    out = []
    for (tool, need), rs in sorted(by.items()):
        out.append(
            {
                "tool": tool,
                "need": need,
                "n": len(rs),
                "text": statistics.median(r["text_chars"] for r in rs),
                "structured": statistics.median(r["structured_chars"] for r in rs),
                "grep": statistics.median(r["grep_chars"] for r in rs),
                "ratio": statistics.median(r["ratio"] for r in rs),
                "passed": sum(r["pass"] for r in rs),
            }
        )
    return out


def print_summary(all_rows, out=sys.stdout):
    w = out.write
    w("\n## Per tool (medians over all repositories)\n\n")
    w("| tool | need | questions | text | structured | grep | grep/answer | pass |\n")
    w("|---|---|---:|---:|---:|---:|---:|---|\n")
    for t in per_tool(all_rows):
        w(f"| {t['tool']} | {t['need']} | {t['n']} | {t['text']:.0f} | {t['structured']:.0f} | {t['grep']:.0f} | "
          f"{fmt_ratio(t['ratio'])} | {t['passed']}/{t['n']} |\n")
    broad = [r for r in all_rows if r["need"] == "broad"]
    exact = [r for r in all_rows if r["need"] == "exact"]
    w("\n## Summary\n\n")
    w(f"- broad needs (grep/(text+structured) >= {BROAD_RATIO:g}): "
      f"{sum(r['pass'] for r in broad)}/{len(broad)} pass\n")
    w(f"- exact needs (text+structured <= {EXACT_FACTOR:g} x max(grep, {EXACT_FLOOR})): "
      f"{sum(r['pass'] for r in exact)}/{len(exact)} pass\n")
    w(f"- answers that found what was asked: {sum(r['found'] for r in all_rows)}/{len(all_rows)}\n")
    fails = [r for r in all_rows if not r["pass"]]
    if fails:
        w("\n## Failures\n\n")
        for r in fails:
            why = [] if r["found"] else ["expect not in text" + (" (error answer)" if r["is_error"] else "")]
            if not r["size_ok"]:
                why.append(r["rule"] + " fails")
            w(f"- {r['repo']}/{r['id']} ({r['tool']}, {r['need']}): text {r['text_chars']}, structured "
              f"{r['structured_chars']}{' (cut)' if r['cut'] else ''}, grep {r['grep_chars']}; {'; '.join(why)}; "
              f"largest: {', '.join(r['dominant_fields'])}; repeated text lines {r['repeated_text_chars']}, "
              f"repeated paths {r['repeated_path_chars']} ({r['most_repeated_path'] or '-'})\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+", metavar="REPO QUESTIONS.json",
                    help="a repository and its question file; several pairs may follow one another")
    ap.add_argument("--out", help="write every question's numbers, text and structured answer here (JSON)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for the index and for one answer")
    ap.add_argument("--serve-arg", action="append", default=[], help="an extra argument for `serve` (repeatable)")
    ap.add_argument("--stderr-dir", default=None, help="where the servers' stderr logs go (default: a temp dir)")
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("give REPO QUESTIONS.json pairs")
    lynx = os.environ.get("LYNX", "git-lynx")
    logdir = a.stderr_dir or os.path.join(os.environ.get("TMPDIR", "/tmp"), "bench-answers-logs")
    os.makedirs(logdir, exist_ok=True)
    reports, all_rows = [], []
    for repo, qfile in zip(a.pairs[::2], a.pairs[1::2]):
        with open(qfile, encoding="utf-8") as f:
            questions = json.load(f)
        for q in questions:
            if q.get("need") not in ("broad", "exact") or "tool" not in q or "grep" not in q:
                sys.exit(f"{qfile}: every question needs tool, need (broad|exact) and grep: {q}")
        name = os.path.basename(os.path.abspath(repo))
        rep = run(repo, questions, lynx, a.timeout, a.serve_arg, os.path.join(logdir, f"{name}.stderr"))
        for r in rep["rows"]:
            r["repo"] = name
        print_tables(rep)
        reports.append(rep)
        all_rows.extend(rep["rows"])
    print_summary(all_rows)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump({"lynx": lynx, "reports": reports}, f, indent=1, ensure_ascii=False, default=str)
    sys.exit(0 if all(r["pass"] for r in all_rows) else 1)


if __name__ == "__main__":
    main()
