#!/usr/bin/env python3
"""Converts semble's published retrieval benchmark into Lynx question sets (docs/eval/semble/).

semble (MinishLab/semble, MIT licence) publishes ~1,250 LLM-written queries over 63 pinned
repositories: benchmarks/repos.json (name, language, url, revision, benchmark_root) and
benchmarks/annotations/<name>.json (a list of {query, relevant, secondary, category, ...}).
This script reads those two straight out of a git directory holding semble's history (nothing
of the reserved repositories is ever written out), drops the reserved repositories, checks
every expected file against the tree of the commit the question will be asked at, and writes

  docs/eval/semble/<name>.questions.json   one set per repository, our annotated format
  docs/eval/semble/SPLIT.json              the repository-level dev / held-out split

Usage:
  scripts/semble-import.py SEMBLE_GIT SEMBLE_COMMIT [--mirrors DIR] [--bench DIR] [--out DIR]
                           [--print-repos]

  SEMBLE_GIT     a git directory with semble's history (e.g. the bare repository `fetch`
                 brings for github:11ways/zemble, a fork that keeps the files unchanged)
  SEMBLE_COMMIT  the semble commit to read (921849164e2632dd4f0e1c1370f82cfe15ed6d6c: the
                 upstream tip the zemble fork was cut from)
  --mirrors DIR  where the repositories' git directories are: DIR/<owner>+<name>/repo
  --bench DIR    or clones: DIR/<name> (scripts/semble-repos.sh); tried after --mirrors
  --out DIR      default docs/eval/semble
  --print-repos  print the REPOS table of scripts/semble-repos.sh and exit

The commit a repository's questions are asked at is semble's pin when the git directory has
it; else (a snapshot older than the pin) the branch tip, among HEAD and every branch, at which
the most of the repository's expected files exist (ties: HEAD, then the newest); both commits
are recorded. A repository with no git directory, or none of whose questions keep an expected
file at that commit, is skipped. The split is drawn over the semble repositories not excluded
for a fixed reason (reserved, already covered, too large, stale), whatever is at hand.
"""
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Reserved for a later, untouched evaluation: never converted, never written out. Matched
# case-insensitively against semble's name and the repository name of its url.
RESERVED = {
    "ripgrep", "flask", "express", "hugo", "requests", "zod", "gin", "axum", "libuv", "fmt",
    "fmtlib", "dapper", "rack", "monolog", "exposed", "alamofire", "django", "json.net",
    "newtonsoft.json", "newtonsoft-json", "guava", "uvicorn", "hono", "viper", "retrofit",
    "serilog", "spdlog",
}
# Already covered by a Lynx set of its own (docs/eval/gson.questions.json).
ALREADY = {"gson"}
# Snapshots over the size limit of the fetch tool (so neither cloned nor verified here).
TOO_LARGE = {"zig": "ziglang/zig snapshot is 562 MB, over the 500 MiB fetch limit"}
# Snapshots too old for the annotations: they describe code years newer than any commit held.
STALE = {"messagepack-csharp": "the neuecc/MessagePack-CSharp snapshot ends in July 2021 (semble pinned 2026); "
                               "src/MessagePack/ does not exist on its default branch, and the best branch tip "
                               "(v1.x, 2020) keeps only 14 of 20 questions, on the v1 code the queries were not written for"}

LANGUAGE = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go",
    "java": "Java", "php": "PHP", "ruby": "Ruby", "rust": "Rust", "csharp": "C#",
    "kotlin": "Kotlin", "scala": "Scala", "swift": "Swift", "cpp": "C++", "c": "C",
    "elixir": "Elixir", "bash": "Bash", "haskell": "Haskell", "lua": "Lua", "zig": "Zig",
}
KIND = {"architecture": "architectural", "semantic": "semantic", "symbol": "symbol"}

SPLIT_RULE = (
    "by repository: languages in alphabetical order of semble's language key; within a language "
    "the repositories in ascending order of sha1(name) (hex); walking that concatenated list with "
    "a 0-based position p, a repository is held out when p % 3 == 2, else dev (so each language "
    "gets floor or ceil of a third of its repositories held out, and a third overall)"
)


def git(gitdir, *args):
    return subprocess.run(["git", "-C", gitdir, *args], capture_output=True, text=True)


def slug_of(url):
    s = url.removeprefix("https://github.com/").removesuffix(".git")
    return s


def reserved(spec):
    names = {spec["name"].lower(), slug_of(spec["url"]).split("/")[1].lower()}
    return bool(names & RESERVED)


def path_of(target):
    return target if isinstance(target, str) else target["path"]


def find_gitdir(spec, mirrors, bench):
    cands = []
    if mirrors:
        cands.append(os.path.join(mirrors, slug_of(spec["url"]).replace("/", "+"), "repo"))
    if bench:
        cands.append(os.path.join(bench, spec["name"]))
    for c in cands:
        if os.path.isdir(c) and git(c, "rev-parse", "--git-dir").returncode == 0:
            return c
    return None


def split_of(names_by_language):
    order = []
    for lang in sorted(names_by_language):
        order += sorted(names_by_language[lang], key=lambda n: hashlib.sha1(n.encode()).hexdigest())
    return {n: ("heldout" if p % 3 == 2 else "dev") for p, n in enumerate(order)}


def resolve(path, tree, root):
    """The repository-relative path for an annotated one. semble indexes only `benchmark_root`
    and matches paths by suffix, so a file under the root wins: the path as written, else the
    root joined with it, else the one file under the root whose path ends with it; only then a
    file elsewhere (as written, or the one ending with it: semble could not have found it)."""
    if root:
        under = [t for t in tree if t.startswith(root + "/") and (t == path or t.endswith("/" + path))]
        if path in under:
            return path, None
        if f"{root}/{path}" in tree:
            return f"{root}/{path}", "under benchmark_root"
        if len(under) == 1:
            return under[0], "suffix match under benchmark_root"
        if len(under) > 1:
            return None, None
    if path in tree:
        return path, ("outside benchmark_root" if root else None)
    hits = [t for t in tree if t.endswith("/" + path)]
    if len(hits) == 1:
        return hits[0], "suffix match" + (" outside benchmark_root" if root else "")
    return None, None


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    semble_git, semble_commit = a[0], a[1]
    opt = lambda k, d=None: a[a.index(k) + 1] if k in a else d
    mirrors, bench = opt("--mirrors"), opt("--bench")
    out = opt("--out", os.path.join(HERE, "docs", "eval", "semble"))
    semble_commit = git(semble_git, "rev-parse", semble_commit + "^{commit}").stdout.strip() or sys.exit("no such semble commit")

    def show(path):
        r = git(semble_git, "show", f"{semble_commit}:{path}")
        if r.returncode != 0:
            sys.exit(f"semble {semble_commit[:12]} has no {path}")
        return json.loads(r.stdout)

    def tree_at(gitdir, commit):
        return set(git(gitdir, "ls-tree", "-r", "--name-only", commit).stdout.split("\n")) - {""}

    def convert(spec, tree, commit, split):
        name = spec["name"]
        ann_path = f"benchmarks/annotations/{name}.json"
        raw = show(ann_path)
        root = spec.get("benchmark_root")
        questions, dropped, missing_files, rewritten = [], [], 0, 0
        for i, item in enumerate(raw, 1):
            targets = [(t, 2) for t in item.get("relevant", [])] + [(t, 1) for t in item.get("secondary", [])]
            files, grades, missing, rewrites = [], {}, [], {}
            for t, grade in targets:
                p = path_of(t)
                r, how = resolve(p, tree, root)
                if r is None:
                    missing.append(p)
                    continue
                if how:
                    rewrites[p] = {"as": r, "how": how}
                if r not in files:
                    files.append(r)
                    grades[r] = grade
            missing_files += len(missing)
            rewritten += len(rewrites)
            src = {
                "set": "semble",
                "file": ann_path,
                "index": i,
                "category": item.get("category"),
                "relevant": item.get("relevant", []),
                "secondary": item.get("secondary", []),
                "grades": grades,
            }
            for k in ("seed", "related"):
                if k in item:
                    src[k] = item[k]
            if missing:
                src["missing_at_commit"] = missing
            if rewrites:
                src["paths_rewritten"] = rewrites
            qid = f"{name}-{i:02d}"
            if not files:
                dropped.append({"id": qid, "query": item["query"], "missing": missing})
                continue
            questions.append({
                "id": qid,
                "query": item["query"],
                "rev": commit,
                "kind": KIND.get(item.get("category"), item.get("category") or "semantic"),
                "split": split,
                "expected": {"files": files},
                "source": src,
            })
        stats = {"annotated": len(raw), "questions": len(questions), "dropped": len(dropped),
                 "missing_files": missing_files, "rewritten_paths": rewritten,
                 "expected_files": sum(len(q["expected"]["files"]) for q in questions)}
        return questions, dropped, stats

    specs = show("benchmarks/repos.json")
    kept, skipped = [], []
    for spec in specs:
        if reserved(spec):
            continue  # not even named in the output
        if spec["name"] in ALREADY:
            skipped.append((spec["name"], "already has a Lynx set"))
            continue
        if spec["name"] in TOO_LARGE:
            skipped.append((spec["name"], TOO_LARGE[spec["name"]]))
            continue
        if spec["name"] in STALE:
            skipped.append((spec["name"], STALE[spec["name"]]))
            continue
        gitdir = find_gitdir(spec, mirrors, bench)
        if gitdir is None:
            skipped.append((spec["name"], "no git directory (fetch it first)"))
            continue
        pin = spec["revision"]
        has_pin = git(gitdir, "cat-file", "-e", pin + "^{commit}").returncode == 0
        how = "semble's pin"
        if has_pin:
            commit = pin
        else:
            head = git(gitdir, "rev-parse", "HEAD").stdout.strip()
            refs = git(gitdir, "for-each-ref", "--sort=-committerdate", "--format=%(objectname) %(refname:short)",
                       "refs/heads", "refs/remotes").stdout.split("\n")
            cands = [(head, "HEAD")] + [tuple(l.split(" ", 1)) for l in refs if l.strip()]
            best = None
            for order, (sha, ref) in enumerate(cands):
                if best and sha == best[1]:
                    continue
                n = convert(spec, tree_at(gitdir, sha), sha, "dev")[2]["expected_files"]
                if best is None or n > best[0]:
                    best = (n, sha, ref)
            commit = best[1]
            how = f"nearest: tip of {best[2]} (semble's pin is not in the snapshot)"
        tree = tree_at(gitdir, commit)
        questions, dropped, stats = convert(spec, tree, commit, "dev")
        if not questions:
            skipped.append((spec["name"], f"no expected file of any question exists at {commit[:12]} ({how}); "
                                          f"semble's pin {pin[:12]} is not in the snapshot"))
            continue
        kept.append((spec, gitdir, commit, has_pin, how, tree))

    if "--print-repos" in a:
        for spec, _, commit, has_pin, *_ in kept:
            print(f'  "{spec["name"]:<20} {slug_of(spec["url"]):<32} {commit}{"" if has_pin else "  " + spec["revision"]}"')
        return

    # The split is drawn over every repository not skipped for a fixed reason above (reserved,
    # already covered, too large, stale), so it does not depend on which clones are at hand.
    by_lang = {}
    for spec in specs:
        if not reserved(spec) and spec["name"] not in ALREADY and spec["name"] not in TOO_LARGE and spec["name"] not in STALE:
            by_lang.setdefault(spec["language"], []).append(spec["name"])
    split = split_of(by_lang)
    missing = {n for ns in by_lang.values() for n in ns} - {spec["name"] for spec, *_ in kept}
    if missing:
        print(f"semble-import: split drawn over repositories not converted this time: {sorted(missing)}", file=sys.stderr)

    os.makedirs(out, exist_ok=True)
    summary = []
    for spec, gitdir, commit, has_pin, how, tree in kept:
        name = spec["name"]
        ann_path = f"benchmarks/annotations/{name}.json"
        questions, dropped, stats = convert(spec, tree, commit, split[name])
        doc = {
            "repository": slug_of(spec["url"]),
            "commit": commit,
            "language": LANGUAGE.get(spec["language"], spec["language"]),
            "rules": [
                "converted from semble's benchmark (MinishLab/semble, MIT licence): queries verbatim, LLM-written "
                "(Claude Sonnet 4.6, per semble's benchmarks/README.md); expected files = semble's `relevant` "
                "(grade 2, in order) then `secondary` (grade 1, in order), de-duplicated; semble itself scores both with gain 1",
                "paths are from the repository root (semble's paths relative to its `benchmark_root` were prefixed "
                "with it, see `source.paths_rewritten`); line spans, seed/related locations and the original targets "
                "are kept in each question's `source`; Lynx scores files only",
                "asked at `commit`: semble's pin when the snapshot had it, else the nearest branch tip "
                "(see `source.commit_choice`, `source.semble_revision`); expected files missing at that commit are "
                "left out of `expected.files` (listed in `source.missing_at_commit`), questions with none left are dropped",
                "kinds: semble's categories (architecture -> architectural, semantic, symbol)",
                "split: by repository (docs/eval/semble/SPLIT.json): every question of a repository is `dev` or `heldout`",
            ],
            "source": {
                "benchmark": "semble",
                "semble_repository": "MinishLab/semble (read from the fork 11ways/zemble, files unchanged)",
                "semble_commit": semble_commit,
                "annotations": ann_path,
                "repos_json": "benchmarks/repos.json",
                "semble_name": name,
                "semble_language": spec["language"],
                "semble_revision": spec["revision"],
                "semble_revision_available": has_pin,
                "commit_choice": how,
                "benchmark_root": spec.get("benchmark_root"),
                "licence": "MIT (Copyright (c) 2026 Thomas van Dongen)",
            },
            "split": split[name],
            "questions": questions,
        }
        if dropped:
            doc["source"]["dropped_questions"] = dropped
        with open(os.path.join(out, f"{name}.questions.json"), "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
        summary.append({"name": name, "language": spec["language"], "split": split[name], **stats,
                        "pin_available": has_pin, "commit": commit, "commit_choice": how})

    with open(os.path.join(out, "SPLIT.json"), "w") as f:
        json.dump({
            "rule": SPLIT_RULE,
            "dev": sorted(n for n, s in split.items() if s == "dev"),
            "heldout": sorted(n for n, s in split.items() if s == "heldout"),
            "by_language": {lang: {"dev": sorted(n for n in ns if split[n] == "dev"),
                                   "heldout": sorted(n for n in ns if split[n] == "heldout")}
                            for lang, ns in sorted(by_lang.items())},
            "skipped": {n: why for n, why in skipped},
            "semble_commit": semble_commit,
        }, f, indent=2)
        f.write("\n")
    json.dump({"repos": summary, "skipped": skipped}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
