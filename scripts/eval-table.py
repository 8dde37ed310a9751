#!/usr/bin/env python3
"""Markdown tables from `git lynx evaluate run --save` reports.

Usage:
  scripts/eval-table.py DIR                 one table per repository: every mode in DIR
  scripts/eval-table.py DIR --vs BEFORE     adds the MRR of the same report in BEFORE
Reports are DIR/<repo>.<mode>.json, as scripts/eval-repos.sh writes them.
"""
import json
import os
import sys

MODES = ["bm25-files", "sparse", "dense-static", "hybrid-static", "dense-onnx", "hybrid-onnx"]
LABEL = {
    "bm25-files": "BM25 over whole files (baseline)",
    "sparse": "sparse (chunk BM25)",
    "dense-static": "dense, static model",
    "hybrid-static": "hybrid, static model",
    "dense-onnx": "dense, MiniLM-L6 int8",
    "hybrid-onnx": "hybrid, MiniLM-L6 int8",
}


def load(d, repo, mode):
    p = os.path.join(d, f"{repo}.{mode}.json")
    return json.load(open(p)) if os.path.exists(p) else None


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d = args[0]
    before = args[args.index("--vs") + 1] if "--vs" in args else None
    repos = sorted({f.split(".")[0] for f in os.listdir(d) if f.endswith(".json") and not f.endswith("questions.json")})
    for repo in repos:
        rows = [(m, load(d, repo, m)) for m in MODES]
        rows = [(m, r) for m, r in rows if r]
        if not rows:
            continue
        print(f"### {repo} ({rows[0][1]['questions']} questions)\n")
        head = "| mode | R@1 | R@5 | R@10 | MRR | NDCG@10 | p50 ms | p95 ms |"
        sep = "|---|---:|---:|---:|---:|---:|---:|---:|"
        if before:
            head += " MRR before |"
            sep += "---:|"
        print(head)
        print(sep)
        for m, r in rows:
            x = r["metrics"]
            line = f"| {LABEL[m]} | {x['recall_1']:.3f} | {x['recall_5']:.3f} | {x['recall_10']:.3f} | {x['mrr']:.3f} | {x['ndcg_10']:.3f} | {r['latency_ms_p50']:.1f} | {r['latency_ms_p95']:.1f} |"
            if before:
                b = load(before, repo, m)
                line += f" {b['metrics']['mrr']:.3f} |" if b else " – |"
            print(line)
        print()


if __name__ == "__main__":
    main()
