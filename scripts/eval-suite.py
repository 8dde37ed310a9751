#!/usr/bin/env python3
"""Runs the retrieval evaluation over every question set and prints one summary table.

Usage:
  scripts/eval-suite.py BENCH OUT [--modes sparse,dense,hybrid] [--sets NAME,...] [--split dev|test]
                        [--vs OUT_BEFORE] [--table-only]

  BENCH   where scripts/bench-repos.sh put the clones (BENCH/<name>, at the pinned commits)
  OUT     where reports go: OUT/mined/<name>.<mode>.json and OUT/annotated/<name>.<mode>.json
  --sets  only these sets: `mined`, `mined-dev`, `mined-heldout`, `annotated`, `semble`,
          `semble-dev`, `semble-heldout`, or names (`gson`, `annotated/click`, `semble/httpx`)
  --split annotated sets only: the dev questions (tuning) or the held-out test questions
          (semble sets are split by repository: `semble-dev` / `semble-heldout`, SPLIT.json)
  --vs    prints the change against reports made earlier in OUT_BEFORE
  --table-only  reads existing reports, runs nothing
  --candidates  also writes each question's scored candidates beside its report
                (OUT/<kind>/<name>.<mode>[.split].candidates.jsonl, for scripts/rank-lab.py)
  --config "search.history=0;search.dense_weight=0.5"
                settings for this run (written to a user configuration file for it)

Environment:
  LYNX          the binary (default: git-lynx on PATH)
  STATIC_MODEL  the static model (default ../shared/models/minilm-static-256)
  STATIC_MODEL_PER_REPO  a folder of static models, one per repository (DIR/<name>, e.g. made by
                `git lynx model distill --repo-words N` in each clone); overrides STATIC_MODEL

Semble sets (docs/eval/semble/<name>.questions.json, cloned by scripts/semble-repos.sh into
BENCH/semble/<name>) are reported per half of the repository split, never mixed.

Question sets: docs/eval/<name>.questions.json (mined from history: the commit subject asked at
the commit's parent, the files it changed as answers) and docs/eval/annotated/<name>.questions.json
(hand-written natural-language questions with the files that answer them, each marked dev or
test). Metrics are at file level over the files of the top 50 chunks (docs/EVALUATION.md).
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINED = ["gson", "black", "tokio", "core", "jq", "leveldb", "polly", "guzzle", "jekyll", "okhttp"]
# Ten further mined sets in the languages with fewest, split by repository like semble's
# (docs/eval/MINED_SPLIT.json): development and held out, never mixed with the ten above.
MINED_SPLIT = json.load(open(os.path.join(HERE, "docs", "eval", "MINED_SPLIT.json")))
ANNOTATED = ["jq", "leveldb", "polly", "guzzle", "jekyll", "okhttp", "prometheus", "click", "axios", "tokio"]


SEMBLE_SPLIT = json.load(open(os.path.join(HERE, "docs", "eval", "semble", "SPLIT.json")))
SEMBLE = {"semble-dev": SEMBLE_SPLIT["dev"], "semble-heldout": SEMBLE_SPLIT["heldout"]}
KINDS = ("mined", "mined-dev", "mined-heldout", "annotated", "semble-dev", "semble-heldout")


def sets(selected):
    out = []
    groups = [("mined", MINED), ("mined-dev", MINED_SPLIT["dev"]), ("mined-heldout", MINED_SPLIT["heldout"])]
    groups += [("annotated", ANNOTATED)] + [(k, v) for k, v in SEMBLE.items()]
    for kind, names in groups:
        for n in names:
            mined = kind.startswith("mined")
            full = n if mined else f"{kind.split('-')[0]}/{n}"
            if not selected or kind in selected or full in selected or (mined and n in selected) or ("semble" in selected and kind.startswith("semble")):
                out.append((kind, n))
    return out


def question_file(kind, name):
    if kind.startswith("mined"):
        return os.path.join(HERE, "docs", "eval", f"{name}.questions.json")
    if kind.startswith("semble"):
        return os.path.join(HERE, "docs", "eval", "semble", f"{name}.questions.json")
    return os.path.join(HERE, "docs", "eval", "annotated", f"{name}.questions.json")


def repo_dir(bench, kind, name):
    return os.path.join(bench, "semble", name) if kind.startswith("semble") else os.path.join(bench, name)


def report_path(out, kind, name, mode, split):
    suffix = f".{split}" if split and kind == "annotated" else ""
    return os.path.join(out, kind, f"{name}.{mode}{suffix}.json")


def user_config(settings):
    """A LYNX_CONFIG_HOME holding `section.key=value;…` as TOML."""
    import tempfile
    d = tempfile.mkdtemp(prefix="lynx-eval-config-")
    sections = {}
    for item in filter(None, (x.strip() for x in settings.split(";"))):
        key, value = item.split("=", 1)
        section, name = key.split(".", 1)
        sections.setdefault(section, []).append(f"{name} = {value}")
    with open(os.path.join(d, "config.toml"), "w") as f:
        for section, lines in sections.items():
            f.write(f"[{section}]\n" + "\n".join(lines) + "\n")
    return d


def run(bench, out, kind, name, mode, split, config_home=None, candidates=False):
    lynx = os.environ.get("LYNX", "git-lynx")
    # Normalised: a path with `..` in it is a different string to tools that record or compare it.
    model = os.environ.get("STATIC_MODEL", os.path.normpath(os.path.join(HERE, "..", "shared", "models", "minilm-static-256")))
    per_repo = os.environ.get("STATIC_MODEL_PER_REPO")
    if per_repo:
        model = os.path.join(per_repo, name)
    args = [lynx, "-q"]
    args += ["--no-dense"] if mode in ("sparse", "bm25-files") else ["--model", model]
    dest = report_path(out, kind, name, mode, split)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    args += ["evaluate", "run", question_file(kind, name), "--mode", mode, "--per-question", "--save", dest]
    if split and kind == "annotated":
        args += ["--split", split]
    if candidates and mode != "bm25-files":
        args += ["--candidates", dest[: -len(".json")] + ".candidates.jsonl"]
    t = time.time()
    env = dict(os.environ)
    if config_home:
        env["LYNX_CONFIG_HOME"] = config_home
    r = subprocess.run(args, cwd=repo_dir(bench, kind, name), capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{kind}/{name} {mode}: {r.stderr.strip() or r.stdout.strip()}")
    return time.time() - t


def load(path):
    return json.load(open(path)) if os.path.exists(path) else None


def table(out, selected, modes, split, before):
    """MRR / R@10 / NDCG@10 / Hit@5 of the file ranking, then `c` Hit@5 / R@10 of the files of
    the top 5 / 10 chunks (the list an agent reads); means per kind of set."""
    def row(kind, name, mode, d):
        r = load(report_path(d, kind, name, mode, split)) if d else None
        return r if r else None

    header = "| set | " + " | ".join(f"{m} MRR / R@10 / NDCG@10 / Hit@5 · chunks Hit@5 / R@10" for m in modes) + " |"
    print(header)
    print("|---|" + "---|" * len(modes))
    means = {}
    for kind, name in sets(selected):
        cells = []
        for m in modes:
            rep = row(kind, name, m, out)
            if rep is None:
                cells.append("–")
                continue
            cur, ch = rep["metrics"], rep.get("chunk_metrics") or {}
            means.setdefault((kind, m), []).append((cur, ch))
            cell = f"{cur['mrr']:.3f} / {cur['recall_10']:.3f} / {cur['ndcg_10']:.3f} / {cur['hit_5']:.2f} · {ch.get('hit_5', 0):.2f} / {ch.get('recall_10', 0):.3f}"
            old = row(kind, name, m, before)
            if old:
                cell += f" ({cur['ndcg_10'] - old['metrics']['ndcg_10']:+.3f} NDCG)"
            cells.append(cell)
        print(f"| {kind}/{name} | " + " | ".join(cells) + " |")
    for kind in KINDS:
        cells = []
        for m in modes:
            v = means.get((kind, m))
            if not v:
                cells.append("–")
                continue
            avg = lambda k: sum(x[0][k] for x in v) / len(v)
            cavg = lambda k: sum(x[1].get(k, 0) for x in v) / len(v)
            cells.append(f"**{avg('mrr'):.3f} / {avg('recall_10'):.3f} / {avg('ndcg_10'):.3f} / {avg('hit_5'):.2f} · {cavg('hit_5'):.2f} / {cavg('recall_10'):.3f}**")
        if any(c != "–" for c in cells):
            print(f"| mean of {kind} sets ({len(means.get((kind, modes[0]), []))}) | " + " | ".join(cells) + " |")


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    bench, out = a[0], a[1]
    opt = lambda k, d=None: a[a.index(k) + 1] if k in a else d
    modes = opt("--modes", "sparse,dense,hybrid").split(",")
    selected = [s for s in opt("--sets", "").split(",") if s]
    split = opt("--split")
    before = opt("--vs")
    config_home = user_config(opt("--config")) if opt("--config") else None
    if "--table-only" not in a:
        for kind, name in sets(selected):
            for m in modes:
                secs = run(bench, out, kind, name, m, split, config_home, "--candidates" in a)
                print(f"  {kind}/{name} {m}: {secs:.0f} s", file=sys.stderr)
    table(out, selected, modes, split, before)


if __name__ == "__main__":
    main()
