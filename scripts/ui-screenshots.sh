#!/usr/bin/env bash
# Screenshots of every page of `git lynx ui`, for docs/ui/: a clean clone of REPO (default: this
# repository) is indexed without a model, the interface is started on it, and headless Chromium
# takes each page at 1280×900 once its scripts have run.
#
#   scripts/ui-screenshots.sh [REPO] [OUT]      (LYNX_BIN: the binary; default: a release build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "${1:-$here}" && pwd)"
out="${2:-$here/docs/ui}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
chromium="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$chromium" ] || { echo "needs Chromium (apt-get install chromium)" >&2; exit 2; }
if [ -z "${LYNX_BIN:-}" ]; then
  (cd "$here" && cargo build --release --quiet)
  LYNX_BIN="${CARGO_TARGET_DIR:-$here/target}/release/git-lynx"
fi
work="$(mktemp -d)"
trap 'kill "${ui_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/repo"
cd "$work/repo"
"$LYNX_BIN" --no-dense --quiet index >/dev/null
"$LYNX_BIN" --no-dense ui >"$work/url" 2>"$work/log" &
ui_pid=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
url="$(head -n1 "$work/url")"
[ -n "$url" ] || { cat "$work/log" >&2; exit 1; }
shoot() { # NAME FRAGMENT
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size=1280,900 --virtual-time-budget=15000 --screenshot="$out/$1.png" "$url$2" >/dev/null 2>&1
  echo "$out/$1.png"
}
# The questions (defaults fit this repository): a definition with many callers, a search.
symbol="${LYNX_SHOT_SYMBOL:-usage}"
query="${LYNX_SHOT_QUERY:-where are search results ranked}"
path="$(git ls-files | grep -E '\.(rs|py|go|ts|js|java)$' | head -n1)"
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
shoot dashboard "#dashboard"
shoot search "#search?q=$(enc "$query")"
shoot symbol "#symbol?name=$(enc "$symbol")"
shoot graph "#graph?symbol=$(enc "$symbol")"
shoot impact "#impact?range=HEAD~3..HEAD"
shoot file "#file?path=$(enc "$path")&line=10&end=20"
shoot config "#config"
shoot feedback "#feedback"
