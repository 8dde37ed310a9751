#!/usr/bin/env bash
# Publishes the Lynx index of a revision through the git remote, for every developer, agent and
# CI job to `git lynx fetch` instead of recomputing it. Run after the default branch is built:
#   bash ci/lynx-publish.sh [REMOTE] [REV...]        (defaults: origin, HEAD)
# Environment:
#   LYNX_BIN       git-lynx binary (default: git-lynx on PATH)
#   LYNX_MODEL     the embedding model teammates use (vectors are shared for it)
#   LYNX_PRUNE=1   keep only these revisions' segments on the remote (bounded size)
set -euo pipefail

remote=${1:-origin}
shift || true
revs=("$@")
[ ${#revs[@]} -eq 0 ] && revs=(HEAD)

lynx=${LYNX_BIN:-git-lynx}
if ! command -v "$lynx" >/dev/null 2>&1; then
  echo "lynx-publish: $lynx not found; install git-lynx first" >&2
  exit 127
fi

args=(push "$remote")
for r in "${revs[@]}"; do
  args+=(--rev "$r")
done
[ "${LYNX_PRUNE:-0}" = 1 ] && args+=(--prune)

# push indexes (and embeds) what the revisions need first, then sends only new segments.
"$lynx" "${args[@]}"
