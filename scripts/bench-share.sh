#!/usr/bin/env bash
# Sharing the index through the git remote, measured: push a repository's index to a local
# bare remote, fetch it into a fresh clone, and compare clone + fetch + first search with
# clone + index + first search; then push the next revisions and report what they add.
#
# Usage: scripts/bench-share.sh REPO [REV] [NEXT]
#   REPO   a git repository (any clone; e.g. one from scripts/bench-repos.sh)
#   REV    the revision published first (default: HEAD~20)
#   NEXT   the revision published next (default: HEAD)
#   LYNX=path/to/git-lynx (default: git-lynx on PATH), LYNX_MODEL=model for the vectors.
set -euo pipefail
repo=$(cd "$1" && pwd)
rev=${2:-HEAD~20}
next=${3:-HEAD}
lynx=${LYNX:-git-lynx}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_TERMINAL_PROMPT=0 LYNX_LOG=warn

now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }
size() { du -sb "$1" | cut -f1; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }

rev_id=$(git -C "$repo" rev-parse "$rev^{commit}")
next_id=$(git -C "$repo" rev-parse "$next^{commit}")
git clone -q --bare "$repo" "$work/remote.git"
git -C "$work/remote.git" update-ref refs/heads/bench "$rev_id"
git clone -q --no-checkout "$work/remote.git" "$work/a"
git -C "$work/a" checkout -q --detach "$rev_id"
files=$(git -C "$work/a" ls-files | wc -l)
echo "repository: $(basename "$repo") at $(git -C "$repo" rev-parse --short "$rev_id"), $files files"

# index + push of a revision from clone a: seconds, segments and bytes sent, remote growth.
publish() {
  local label=$1 id=$2 before after t0 t1 pushed
  before=$(size "$work/remote.git")
  t0=$(now)
  pushed=$("$lynx" -C "$work/a" --json push origin --rev "$id")
  t1=$(now)
  after=$(size "$work/remote.git")
  echo "$label: index + push $(secs "$t0" "$t1") s, $(echo "$pushed" | field "['new_segments']") segments, $(echo "$pushed" | field "['new_bytes']") segment bytes, remote grew $((after - before)) bytes"
}

publish "first publication ($rev)" "$rev_id"
t0=$(now)
"$lynx" -C "$work/a" --json push origin --rev "$rev_id" >/dev/null
t1=$(now)
echo "push again (nothing new): $(secs "$t0" "$t1") s"

q="where are errors handled"
for mode in fetch index; do
  git clone -q --no-checkout "$work/remote.git" "$work/$mode"
  git -C "$work/$mode" checkout -q --detach "$rev_id"
  t0=$(now)
  if [ "$mode" = fetch ]; then
    fetched=$("$lynx" -C "$work/$mode" --json fetch origin)
  fi
  t1=$(now)
  idx=$("$lynx" -C "$work/$mode" --json index)
  "$lynx" -C "$work/$mode" --json search "$q" >/dev/null
  t2=$(now)
  echo "clone + $mode + first search: $mode $(secs "$t0" "$t1") s, then index + search $(secs "$t1" "$t2") s (total $(secs "$t0" "$t2") s); blobs processed $(echo "$idx" | field "['blobs_new']"), chunks embedded $(echo "$idx" | field "['chunks_embedded']")"
  [ "$mode" = fetch ] && echo "  fetched $(echo "$fetched" | field "['new_segments']") segments, store $(size "$work/fetch/.lynx/objects") bytes"
done

git -C "$work/a" checkout -q --detach "$next_id"
new_blobs=$(git -C "$work/a" diff --name-only --diff-filter=AM "$rev_id" "$next_id" | wc -l)
publish "next revision ($next, $new_blobs files added or modified)" "$next_id"
