#!/usr/bin/env python3
"""Tries ranking changes offline on the candidates `git lynx evaluate run --candidates` wrote.

Each candidate line holds what scored a chunk (BM25, cosine, ranks, the priors that applied, the
boost, the final score). This script redoes the ranking after retrieval — fusion, file coherence,
priors, file evidence, ordering, the per-file decay — with settings given on the command line,
and scores the files of the top 50 chunks as `evaluate run` does (NDCG@10, MRR, Recall@10 of the
file ranking; Hit@5 of the files of the top 5 chunks). With the settings Lynx uses it reproduces
the scores it wrote (`--check`), so a difference is the change's, not the replica's.

Usage:
  scripts/rank-lab.py DIR [--check] [--set key=value ...] [--sets GLOB] [--mode hybrid|sparse]

  DIR   holds <kind>/<name>.hybrid.candidates.jsonl (scripts/eval-suite.py --candidates)
  --set dense_weight=0.4 coherence=0.2 file_evidence=0.25 chunk_decay=0.5 ...
        (names as in `[search]` of the configuration; see DEFAULTS)

Reports the mean per kind of set (each set weighs the same), split into development and
held-out sets as eval-suite.py splits them.
"""
import glob
import json
import math
import os
import sys

DEFAULTS = {
    "dense_weight": 0.4,
    "coherence": 0.2,
    "file_evidence": 0.25,
    "chunk_decay": 0.5,
    # Prior factors by the name `Priors::explain` gives them; None keeps the dumped factor.
    "test": None,
    "prose": None,
    "secondary": None,
    "declaration": None,
    "vendored": None,
    "stem": None,
    "ident": None,
    "scope": None,
    "k": 10,
}

PRIOR_KEYS = {
    "test file": "test",
    "prose or data file": "prose",
    "secondary code (examples, benchmarks, build output)": "secondary",
    "secondary code (examples, benchmarks, build output, generated)": "secondary",
    "type declarations (.d.ts, .pyi)": "declaration",
    "vendored or third-party code": "vendored",
    "its file is named by a word of the query": "stem",
    "named by an identifier in the query": "ident",
    "the member the query names in full": "ident",
    "under the scope the query names (`scope: …`)": "scope",
}


def ndcg10(ranked, rel):
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(ranked[:10]) if r in rel)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    return dcg / idcg if idcg else 0.0


def scores(ranked, rel):
    first = next((i for i, r in enumerate(ranked) if r in rel), None)
    return {
        "ndcg": ndcg10(ranked, rel),
        "mrr": 0.0 if first is None else 1 / (first + 1),
        "r10": len([r for r in ranked[:10] if r in rel]) / len(rel),
    }


def dedup(paths):
    seen, out = set(), []
    for p in paths:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def rank(line, s, extra=None, prior=None):
    """The candidates' final order under settings `s` (list of dicts, best first). `extra`
    may rescore the fused candidates in place (a boost); `prior(line, candidate)` gives a further
    multiplier (a prior being tried)."""
    cands = [dict(c) for c in line["candidates"]]
    if not cands:
        return []
    hybrid = line["mode"] == "hybrid"
    w = s["dense_weight"]
    smax = max(max((c["bm25"] or 0.0) for c in cands), 1e-6)
    cmax = max(max((c["cosine"] or 0.0) for c in cands), 1e-6)
    for c in cands:
        if hybrid:
            c["f"] = (1 - w) * (c["bm25"] or 0.0) / smax + w * max(c["cosine"] or 0.0, 0.0) / cmax
        else:
            c["f"] = c["bm25"] or 0.0
        c["s"] = c["f"]
    if extra:
        extra(line, cands, s)
    if s["coherence"] > 0:
        top_score = max(c["s"] for c in cands)
        files = {}
        for i, c in enumerate(cands):
            e = files.setdefault(c["file"], [0.0, i])
            e[0] += c["s"]
            if c["s"] > cands[e[1]]["s"]:
                e[1] = i
        top = max(v[0] for v in files.values())
        if top > 0 and top_score > 0:
            for total, best in files.values():
                cands[best]["s"] += s["coherence"] * top_score * total / top
    for c in cands:
        f = 1.0
        for name, factor in c["priors"]:
            key = PRIOR_KEYS.get(name)
            if key and s.get(key) is not None:
                factor = s[key]
            elif name == "changed recently":
                pass
            f *= factor
        if prior:
            f *= prior(line, c)
        c["s"] *= f
    share = s["file_evidence"]
    if share > 0:
        best = {}
        for c in cands:
            e = best.setdefault(c["file"], [0.0, 0.0])
            if c["s"] > e[0]:
                e[0], e[1] = c["s"], e[0]
            elif c["s"] > e[1]:
                e[1] = c["s"]
        for c in cands:
            first, second = best[c["file"]]
            c["s"] += share * (second if c["s"] >= first else first)
    cands.sort(key=lambda c: (-c["s"], c["path"], c["start_line"]))
    d = s["chunk_decay"]
    if 0 < d < 1:
        seen = {}
        for c in cands:
            n = seen.get(c["file"], 0)
            if n:
                c["s"] *= d**n
            seen[c["file"]] = n + 1
        cands.sort(key=lambda c: -c["s"])
    return cands


def evaluate(line, s, extra=None, prior=None):
    ranked = rank(line, s, extra, prior)[: s["k"] * 5]
    rel = set(line["expected"])
    files = dedup(c["path"] for c in ranked)
    out = scores(files, rel)
    top5 = dedup(c["path"] for c in ranked[:5])
    out["hit5"] = 1.0 if any(p in rel for p in top5[:10]) else 0.0
    return out


def load(d, pattern="*", mode="hybrid"):
    """Sets by (kind, name); the annotated sets' questions are split into `annotated-dev` and
    `annotated-test` by their own split (run them without `--split`)."""
    sets = {}
    for p in sorted(glob.glob(os.path.join(d, pattern, f"*.{mode}.candidates.jsonl"))):
        kind = os.path.basename(os.path.dirname(p))
        name = os.path.basename(p)[: -len(f".{mode}.candidates.jsonl")]
        lines = [json.loads(x) for x in open(p)]
        if kind == "annotated":
            for split in ("dev", "test"):
                sets[(f"annotated-{split}", name)] = [q for q in lines if (q.get("split") or "dev") == split]
        else:
            sets[(kind, name)] = lines
    return sets


def run(sets, s, extra=None, prior=None):
    per_kind = {}
    for (kind, name), lines in sets.items():
        if not lines:
            continue
        rows = [evaluate(q, s, extra, prior) for q in lines]
        mean = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
        per_kind.setdefault(kind, []).append(mean)
    return {k: {m: sum(v[m] for v in vs) / len(vs) for m in vs[0]} | {"sets": len(vs)} for k, vs in per_kind.items()}


def show(result, label=""):
    for kind in sorted(result):
        r = result[kind]
        print(f"{label:24} {kind:16} ({r['sets']:2}) NDCG {r['ndcg']:.4f}  MRR {r['mrr']:.4f}  R@10 {r['r10']:.4f}  Hit@5 {r['hit5']:.3f}")


def check(sets):
    """The replica with the defaults gives the dumped scores back. Not always to the last digit:
    the dump holds the candidates after byte-identical duplicates were dropped, which still
    counted in their file's coherence sum."""
    off = total = 0
    for lines in sets.values():
        for q in lines:
            for c in rank(q, DEFAULTS):
                total += 1
                off += abs(c["s"] - c["score"]) > 1e-3 * max(abs(c["score"]), 1e-6)
    print(f"candidates scored differently from the dump: {off} of {total}")
    return off


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d = args[0]
    s = dict(DEFAULTS)
    pattern = "*"
    mode = "hybrid"
    do_check = False
    i = 1
    while i < len(args):
        a = args[i]
        if a == "--check":
            do_check = True
        elif a == "--mode":
            i += 1
            mode = args[i]
        elif a == "--sets":
            i += 1
            pattern = args[i]
        elif a == "--set":
            i += 1
            k, v = args[i].split("=")
            if k not in s:
                sys.exit(f"unknown setting {k}; known: {', '.join(s)}")
            s[k] = float(v) if k != "k" else int(v)
        else:
            sys.exit(f"unknown argument {a}")
        i += 1
    sets = load(d, pattern, mode)
    if do_check:
        check(sets)
    show(run(sets, s))


if __name__ == "__main__":
    main()
