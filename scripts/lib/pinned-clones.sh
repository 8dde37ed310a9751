# Clones the pinned repositories of the caller's REPOS array ("name owner/name commit ..."
# per entry) and checks each out at its commit. Sourced by bench-repos.sh and semble-repos.sh.
#
#   pinned_clones TAG DEST [NAME...]
#     TAG   prefix of every message (the calling script's name)
#     DEST  where the clones go, one per DEST/<name>
#     NAME  only these entries (an unknown one is exit 2); default: all of them
#
# LYNX_BENCH_MIRRORS=/path/to/mirrors clones from local bare repositories <owner>+<name>/repo
# instead of GitHub (origin still points at GitHub); a repo missing there comes from GitHub.
# Re-running is safe: an existing clone is reused, fetched only if the commit is missing.
pinned_clones() {
  local tag=$1 dest=$2
  shift 2
  local wanted=("$@") mirrors=${LYNX_BENCH_MIRRORS:-}
  local w entry name slug commit found keep url dir src mirror head missing
  for w in "${wanted[@]}"; do
    found=0
    for entry in "${REPOS[@]}"; do
      read -r name _ <<<"$entry"
      [[ $name == "$w" ]] && found=1
    done
    [[ $found == 1 ]] || { echo "$tag: unknown repo '$w' (known: ${REPOS[*]%% *})" >&2; exit 2; }
  done
  mkdir -p "$dest"
  for entry in "${REPOS[@]}"; do
    read -r name slug commit _ <<<"$entry"
    if [[ ${#wanted[@]} -gt 0 ]]; then
      keep=0
      for w in "${wanted[@]}"; do [[ $w == "$name" ]] && keep=1; done
      [[ $keep == 1 ]] || continue
    fi
    url="https://github.com/$slug"
    dir="$dest/$name"
    src=$url
    if [[ -n $mirrors ]]; then
      mirror="$mirrors/${slug/\//+}/repo"
      if [[ -d $mirror ]]; then
        src=$mirror
      else
        echo "$tag: $name: no mirror at $mirror, cloning from GitHub" >&2
      fi
    fi
    if [[ -d $dir/.git ]]; then
      echo "$tag: $name: reusing $dir"
    else
      echo "$tag: $name: cloning $src"
      git clone -q --no-checkout "$src" "$dir"
      git -C "$dir" remote set-url origin "$url"
    fi
    if ! git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
      echo "$tag: $name: fetching $commit"
      git -C "$dir" fetch -q "$src" "$commit" || git -C "$dir" fetch -q origin
    fi
    git -C "$dir" -c advice.detachedHead=false checkout -q "$commit"
    head=$(git -C "$dir" rev-parse HEAD)
    if [[ $head != "$commit" ]]; then
      echo "$tag: $name: HEAD is $head, expected $commit" >&2
      exit 1
    fi
    # A snapshot may lack its largest blobs: HEAD is right but those files are not written.
    # The index then reads what git has, so say which, and how to make the checkout whole.
    missing=$(git -C "$dir" ls-files --deleted)
    if [[ -n $missing ]]; then
      echo "$tag: $name: $(wc -l <<<"$missing") file(s) of $commit are not in the checkout (their blobs are missing from $src), e.g. $(head -3 <<<"$missing" | tr '\n' ' ')" >&2
      echo "$tag: $name: fetch them from GitHub (git -C $dir fetch origin $commit && git -C $dir checkout -f $commit), or if they are not source, git -C $dir update-index --skip-worktree -- <paths>" >&2
    fi
    echo "$tag: $name: $url @ $commit"
  done
}
