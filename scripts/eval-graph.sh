#!/usr/bin/env bash
# Code-graph precision and recall against the hand-checked truth of docs/eval/graph/, one
# repository per truth file, each at its pinned commit (clones from scripts/bench-repos.sh).
# Usage: scripts/eval-graph.sh BENCH_DIR [--details]     (LYNX=path/to/git-lynx)
set -euo pipefail
bench=$(cd "$1" && pwd)
shift
lynx=${LYNX:-git-lynx}
here=$(cd "$(dirname "$0")/.." && pwd)
for truth in "$here"/docs/eval/graph/*.json; do
  name=$(basename "$truth" .json)
  if [ ! -d "$bench/$name" ]; then
    echo "skipped $name: no clone at $bench/$name (scripts/bench-repos.sh $bench $name)" >&2
    continue
  fi
  "$lynx" -C "$bench/$name" --no-dense -q evaluate graph "$truth" "$@"
  echo
done
