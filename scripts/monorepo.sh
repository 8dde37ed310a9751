#!/usr/bin/env bash
# A synthetic monorepo for the indexing benchmark (benches/monorepo.rs): twenty public
# repositories, each at a pinned commit, placed side by side in one tree (`git read-tree
# --prefix`) and committed as one commit — about 88,000 files in eleven languages. Nothing of
# theirs is vendored here: this script clones them and assembles the tree.
#
#   scripts/monorepo.sh [DIR]            (default ./monorepo; the repository is DIR/repo)
#   LYNX_BENCH_MIRRORS=/path scripts/monorepo.sh DIR
#     read from local bare repositories <owner>+<name>/repo instead of GitHub
#
# Re-running is safe: fetched (or borrowed) commits are kept, and the commit is made again (the same tree,
# the same fixed dates, so the same commit id).
set -euo pipefail

# directory  owner/name  pinned commit
REPOS=(
  "ansible      ansible/ansible              c9ac477e53a99e95781f333eec3329a935c1bf95"
  "kafka        apache/kafka                 1eb7644349cb07139d6a3c1ad1986979647cac99"
  "curl         curl/curl                    5c61e168698a72b87437d58ed728bcdea6d5db42"
  "deno         denoland/deno                98f9507affc905f088124891add3a8dd63b91f77"
  "etcd         etcd-io/etcd                 c34dc7ee0048fd2bcc44d50beff002e5e8069b69"
  "git          git/git                      1a3e64c6c4a623626ff0687008732a8e007e2a1c"
  "terraform    hashicorp/terraform          883c7221ee2e0bc2fad6912fd4b3cc4b53a598a7"
  "helm         helm/helm                    e9b85e4de16ad45805843fb121748018cf89094b"
  "laravel      laravel/framework            bd71b45fbb7e672957bf6ff61baddefe15fbca6a"
  "json         nlohmann/json                199dea11b17c533721b26249e2dcaee6ca1d51d3"
  "prometheus   prometheus/prometheus        d15adb9ad7e5d9fbde3a9a8f30200593a5a14d86"
  "black        psf/black                    8947c48ef2077c3a301b03c1e814dc2e3f78436e"
  "rails        rails/rails                  2a2db1e8d6d104ee0611efcae7eb023af65cff34"
  "redis        redis/redis                  4f8cdc2a1ea53e42955af758aabffee67cb455dd"
  "cargo        rust-lang/cargo              af373f761aa4e42b093c2e453078fd73c8ce54dd"
  "spring-boot  spring-projects/spring-boot  c329ffa25dc160a90ebe5e4b006ad4cdf89d8683"
  "okhttp       square/okhttp                1682d9bac8c03dffde2969b0b74d47649d0dbb52"
  "symfony      symfony/symfony              5feb7493c372384d78b4931bb76f73c83f49f50e"
  "tokio        tokio-rs/tokio               ea91b33ca57ff0581b38e735cc108f831bccbdaa"
  "vue          vuejs/core                   e2bede96134f757aad5c5b33ac9be055022dbfc8"
)

dir="${1:-monorepo}"
mkdir -p "$dir"
repo="$(cd "$dir" && pwd)/repo"
[ -d "$repo/.git" ] || git init -q "$repo"
mkdir -p "$repo/.git/objects/info"
cd "$repo"
export GIT_INDEX_FILE="$repo/.git/monorepo-index"
rm -f "$GIT_INDEX_FILE"
for line in "${REPOS[@]}"; do
  read -r name slug commit <<<"$line"
  if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
    mirror="${LYNX_BENCH_MIRRORS:-}/${slug/\//+}/repo"
    if [ -n "${LYNX_BENCH_MIRRORS:-}" ] && [ -d "$mirror" ]; then
      # Borrowed, not copied (a mirror may lack its largest blobs, which a fetch would refuse;
      # Lynx reports those files as unreadable).
      objects="$(cd "$mirror" && pwd)/objects"
      grep -qxF "$objects" .git/objects/info/alternates 2>/dev/null || echo "$objects" >>.git/objects/info/alternates
      src="$mirror"
    else
      src="https://github.com/$slug.git"
      echo "fetching $slug" >&2
      git fetch -q --no-tags "$src" "$commit" 2>/dev/null || git fetch -q --no-tags "$src"
    fi
    git cat-file -e "$commit^{commit}" || { echo "$slug: $commit not found in $src" >&2; exit 1; }
  fi
  git read-tree --prefix="$name/" "$commit^{tree}" 2>/dev/null
done
tree="$(git write-tree --missing-ok)"
export GIT_AUTHOR_NAME=monorepo GIT_AUTHOR_EMAIL=monorepo@example.invalid GIT_AUTHOR_DATE="2026-12-01T00:00:00Z"
export GIT_COMMITTER_NAME=monorepo GIT_COMMITTER_EMAIL=monorepo@example.invalid GIT_COMMITTER_DATE="2026-12-01T00:00:00Z"
commit="$(echo "twenty repositories side by side" | git commit-tree "$tree")"
git update-ref refs/heads/main "$commit"
git symbolic-ref HEAD refs/heads/main
unset GIT_INDEX_FILE
echo "$repo: $(git ls-tree -r --name-only HEAD | wc -l) files at $commit"
