#!/usr/bin/env bash
# Lynx impact report for a pull request (any CI; see ci/README.md).
#
#   ci/lynx-ci.sh [--base REF] [--head REF] [--report FILE] [--fail-on CHECK]...
#                 [--shared-objects DIR|FILE.lynxpack] [--publish-objects DIR|FILE.lynxpack]
#                 [--max-depth N] [--allow-no-base] [BASE [HEAD]]
#
# Every option has an environment variable (flags and arguments win):
#   LYNX_BASE             base ref      (default: <remote>/$GITHUB_BASE_REF on a pull request,
#                         else the remote's default branch (refs/remotes/<remote>/HEAD, or
#                         asked of the remote), else <remote>/main, <remote>/master; the
#                         remote is origin, else the first one)
#   LYNX_HEAD             head ref      (default: HEAD)
#   LYNX_REPORT           markdown report file (default: lynx-impact.md)
#   LYNX_FAIL_ON          comma-separated checks: callers>N, tests>N, deleted, public-api
#   LYNX_SHARED_OBJECTS   object directory to reuse read-only (added to
#                         LYNX_ALTERNATE_OBJECT_DIRECTORIES), or a .lynxpack file to import
#   LYNX_PUBLISH_OBJECTS  after indexing, export the objects BASE and HEAD need here
#                         (a directory, or a single file when it ends in .lynxpack)
#   LYNX_MAX_DEPTH        caller hops to follow (default: git-lynx's, 3)
#   LYNX_CI_STRICT=1      fail the job on any Lynx problem (default: only on tripped checks)
#   LYNX_CI_DENSE=0       index without embeddings (impact does not need them)
#   LYNX_CI_FETCH=0       never fetch (default: fetch a missing base branch, and unshallow
#                         a shallow clone when the merge base is missing)
#   LYNX_CI_ALLOW_NO_BASE=1  when no base can be computed (none found, refs missing, no
#                         merge base), write a report saying so and exit 0 instead of 1
#   LYNX_BIN              the git-lynx executable (default: git-lynx on PATH, else `git lynx`)
#
# Exit status: 3 when a --fail-on check trips (the report is still written);
# 1 when no base can be computed (no base found, BASE or HEAD missing, no merge base),
# with the reason on stderr and in the report, unless --allow-no-base;
# 0 otherwise, unless LYNX_CI_STRICT=1, in which case any other failure of git-lynx
# is the exit status. 2: usage error of this script.
#
# History: the range is BASE...HEAD (changes on HEAD since the merge base), so the
# clone must contain the merge base: check out with full history (fetch-depth: 0 on
# GitHub), or at least deep enough to reach it.

set -euo pipefail

die_usage() {
	echo "lynx-ci: $*" >&2
	echo "usage: lynx-ci.sh [--base REF] [--head REF] [--report FILE] [--fail-on CHECK]... [--shared-objects DIR] [--publish-objects DIR] [--max-depth N] [--allow-no-base] [BASE [HEAD]]" >&2
	exit 2
}

base="${LYNX_BASE:-}" # empty: found below
head="${LYNX_HEAD:-HEAD}"
report="${LYNX_REPORT:-lynx-impact.md}"
shared="${LYNX_SHARED_OBJECTS:-}"
publish="${LYNX_PUBLISH_OBJECTS:-}"
max_depth="${LYNX_MAX_DEPTH:-}"
strict="${LYNX_CI_STRICT:-0}"
allow_no_base="${LYNX_CI_ALLOW_NO_BASE:-0}"
fail_on=()
IFS=',' read -r -a _env_checks <<<"${LYNX_FAIL_ON:-}"
for c in "${_env_checks[@]+"${_env_checks[@]}"}"; do
	c="${c#"${c%%[![:space:]]*}"}"
	c="${c%"${c##*[![:space:]]}"}"
	[[ -n "$c" ]] && fail_on+=("$c")
done

positional=()
while (($#)); do
	case "$1" in
	--base) base="${2?--base needs a value}"; shift 2 ;;
	--base=*) base="${1#*=}"; shift ;;
	--head) head="${2?--head needs a value}"; shift 2 ;;
	--head=*) head="${1#*=}"; shift ;;
	--report | -o) report="${2?--report needs a value}"; shift 2 ;;
	--report=*) report="${1#*=}"; shift ;;
	--fail-on) fail_on+=("${2?--fail-on needs a value}"); shift 2 ;;
	--fail-on=*) fail_on+=("${1#*=}"); shift ;;
	--shared-objects) shared="${2?--shared-objects needs a value}"; shift 2 ;;
	--shared-objects=*) shared="${1#*=}"; shift ;;
	--publish-objects) publish="${2?--publish-objects needs a value}"; shift 2 ;;
	--publish-objects=*) publish="${1#*=}"; shift ;;
	--max-depth) max_depth="${2?--max-depth needs a value}"; shift 2 ;;
	--max-depth=*) max_depth="${1#*=}"; shift ;;
	--strict) strict=1; shift ;;
	--allow-no-base) allow_no_base=1; shift ;;
	-h | --help) sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	--) shift; positional+=("$@"); break ;;
	-*) die_usage "unknown option $1" ;;
	*) positional+=("$1"); shift ;;
	esac
done
((${#positional[@]} <= 2)) || die_usage "too many arguments"
((${#positional[@]} >= 1)) && base="${positional[0]}"
((${#positional[@]} >= 2)) && head="${positional[1]}"
[[ -n "$head" && -n "$report" ]] || die_usage "empty head or report"

if [[ -n "${LYNX_BIN:-}" ]]; then
	lynx=("$LYNX_BIN")
elif command -v git-lynx >/dev/null 2>&1; then
	lynx=(git-lynx)
else
	lynx=(git lynx)
fi

warnings=()
first_failure=0 # first non-check failure (status), for LYNX_CI_STRICT
warn() {
	warnings+=("$1")
	if [[ -n "${GITHUB_ACTIONS:-}" ]]; then
		echo "::warning title=Lynx::$1"
	else
		echo "lynx-ci: warning: $1" >&2
	fi
}
problem() { # status message
	((first_failure != 0)) || first_failure="$1"
	warn "$2"
}
last_error_line() { # the most telling line of a captured output
	local line best=""
	while IFS= read -r line; do
		[[ -z "$best" && -n "$line" ]] && best="$line"
		if [[ "$line" == error:* ]]; then best="${line#error: }"; break; fi
	done <<<"$1"
	printf '%s' "$best"
}
finish() { # status
	local status="$1"
	if ((status == 0 && first_failure != 0)) && [[ "$strict" == 1 ]]; then
		status="$first_failure"
	fi
	exit "$status"
}

# --- refs and history ---------------------------------------------------------
fetch_ok=1
[[ "${LYNX_CI_FETCH:-1}" == 0 ]] && fetch_ok=0

resolve() { git rev-parse --verify --quiet "$1^{commit}" 2>/dev/null; }

write_failure_report() { # message
	mkdir -p "$(dirname -- "$report")"
	{
		echo "### Lynx impact report: \`${base:-(no base)}...$head\`"
		echo
		echo "Lynx could not compute the impact of this change: $1"
	} >"$report"
}

# No base, no report: fail with the reason (a green job with an empty report hides a
# misconfigured pipeline), or with --allow-no-base warn and say so in the report.
no_base() { # message
	write_failure_report "$1."
	if [[ "$allow_no_base" == 1 ]]; then
		problem 1 "$1"
		finish 0
	fi
	echo "lynx-ci: error: $1 (--allow-no-base writes the report and exits 0)" >&2
	exit 1
}

# The remote the base branch lives on: origin, else the first remote.
remote=""
if git remote 2>/dev/null | grep -qx origin; then
	remote=origin
else
	remote="$(git remote 2>/dev/null | head -n 1)"
fi

base_from=""
if [[ -z "$base" && -n "${GITHUB_BASE_REF:-}" ]]; then
	base="${remote:-origin}/${GITHUB_BASE_REF}"
	base_from="the pull request's base branch"
fi
if [[ -z "$base" && -n "$remote" ]]; then
	# The remote's default branch, as the clone recorded it...
	default_ref="$(git symbolic-ref --quiet "refs/remotes/$remote/HEAD" 2>/dev/null || true)"
	if [[ -n "$default_ref" ]]; then
		base="${default_ref#refs/remotes/}"
	elif [[ $fetch_ok == 1 ]]; then
		# ...or as the remote says (CI checkouts often lack refs/remotes/<remote>/HEAD).
		default_ref="$(git ls-remote --symref "$remote" HEAD 2>/dev/null | awk '$1 == "ref:" && $3 == "HEAD" { print $2; exit }')" || true
		[[ "$default_ref" == refs/heads/* ]] && base="$remote/${default_ref#refs/heads/}"
	fi
	[[ -n "$base" ]] && base_from="the default branch of $remote"
	if [[ -z "$base" ]]; then
		for b in main master; do
			if resolve "$remote/$b" >/dev/null; then
				base="$remote/$b"
				base_from="$remote/$b exists"
				break
			fi
		done
	fi
fi
if [[ -z "$base" ]]; then
	if [[ -z "$remote" ]]; then
		no_base "no base to compare with: no --base given and the repository has no remote (pass --base REF or set LYNX_BASE)"
	fi
	no_base "no base to compare with: no --base given, and $remote has no default branch (refs/remotes/$remote/HEAD), main or master (pass --base REF or set LYNX_BASE)"
fi
[[ -n "$base_from" ]] && echo "lynx-ci: base $base ($base_from)" >&2

base_sha="$(resolve "$base" || true)"
if [[ -z "$base_sha" && $fetch_ok == 1 && -n "$remote" && "$base" == "$remote"/* ]]; then
	branch="${base#"$remote"/}"
	echo "lynx-ci: fetching $branch from $remote (base ref $base is missing)" >&2
	git fetch --quiet --no-tags "$remote" "+refs/heads/$branch:refs/remotes/$remote/$branch" >&2 || true
	base_sha="$(resolve "$base" || true)"
elif [[ -z "$base_sha" && $fetch_ok == 1 && -n "$remote" && "$base" =~ ^[0-9a-f]{40}$ ]]; then
	echo "lynx-ci: fetching commit $base from $remote (base is missing)" >&2
	git fetch --quiet --no-tags "$remote" "$base" >&2 || true
	base_sha="$(resolve "$base" || true)"
fi
head_sha="$(resolve "$head" || true)"
# Full commit ids (e.g. a PR's base.sha / head.sha) read better abbreviated in the report.
[[ -n "$base_sha" && "$base" =~ ^[0-9a-f]{40}$ ]] && base="$(git rev-parse --short=12 "$base_sha")"
[[ -n "$head_sha" && "$head" =~ ^[0-9a-f]{40}$ ]] && head="$(git rev-parse --short=12 "$head_sha")"

if [[ -z "$base_sha" || -z "$head_sha" ]]; then
	[[ -z "$base_sha" ]] && msg="base ref \`$base\` not found" || msg="head ref \`$head\` not found"
	no_base "$msg (fetch it, or check out with full history: fetch-depth 0)"
fi

if ! git merge-base "$base_sha" "$head_sha" >/dev/null 2>&1; then
	if [[ $fetch_ok == 1 && "$(git rev-parse --is-shallow-repository 2>/dev/null)" == true ]]; then
		echo "lynx-ci: shallow clone without the merge base of $base and $head; fetching full history" >&2
		git fetch --quiet --no-tags --unshallow "${remote:-origin}" >&2 || true
	fi
	if ! git merge-base "$base_sha" "$head_sha" >/dev/null 2>&1; then
		no_base "no merge base between \`$base\` and \`$head\` (shallow clone? use fetch-depth 0)"
	fi
fi

if ! "${lynx[@]}" --version >/dev/null 2>&1; then
	msg="git-lynx is not installed or does not run (\`${lynx[*]} --version\` failed)"
	problem 127 "$msg"
	write_failure_report "$msg."
	finish 0
fi

# --- shared objects -----------------------------------------------------------
if [[ -n "$shared" ]]; then
	if [[ -d "$shared" ]]; then
		shared_abs="$(cd "$shared" && pwd -P)"
		export LYNX_ALTERNATE_OBJECT_DIRECTORIES="${shared_abs}${LYNX_ALTERNATE_OBJECT_DIRECTORIES:+:$LYNX_ALTERNATE_OBJECT_DIRECTORIES}"
		echo "lynx-ci: reusing objects from $shared_abs (read-only alternate)" >&2
	elif [[ -f "$shared" ]]; then
		rc=0
		out="$("${lynx[@]}" objects import "$shared" --quiet 2>&1)" || rc=$?
		((rc == 0)) || problem "$rc" "importing $shared failed (exit $rc): $(last_error_line "$out")"
	else
		warn "LYNX_SHARED_OBJECTS=$shared does not exist; indexing from scratch"
	fi
fi

# --- index --------------------------------------------------------------------
index_args=(index --rev "$base" --rev "$head" --quiet)
[[ "${LYNX_CI_DENSE:-1}" == 0 ]] && index_args+=(--no-dense)
start=$SECONDS
rc=0
out="$("${lynx[@]}" "${index_args[@]}" 2>&1)" || rc=$?
[[ -n "$out" ]] && printf '%s\n' "$out" >&2
if ((rc != 0)); then
	problem "$rc" "git lynx index failed (exit $rc): $(last_error_line "$out")"
fi
index_secs=$((SECONDS - start))

# --- impact -------------------------------------------------------------------
impact_args=(impact "$base...$head" --format markdown --quiet --no-dense)
[[ -n "$max_depth" ]] && impact_args+=(--max-depth "$max_depth")
for c in "${fail_on[@]+"${fail_on[@]}"}"; do impact_args+=(--fail-on "$c"); done
mkdir -p "$(dirname -- "$report")"
impact_status=0
err_file="$(mktemp)"
trap 'rm -f "$err_file"' EXIT
"${lynx[@]}" "${impact_args[@]}" >"$report.tmp" 2>"$err_file" || impact_status=$?
checks="$(grep -E '^check failed: ' "$report.tmp" 2>/dev/null || true)"
case $impact_status in
0 | 3)
	# `check failed:` lines follow the markdown as plain lines; make them a list of
	# their own (not a lazy continuation of the report's last list item).
	awk '
		/^check failed: / {
			if (!inchecks && prev != "") print ""
			inchecks = 1
			sub(/^check failed: /, "")
			print "- **check failed:** " $0
			prev = $0
			next
		}
		{ inchecks = 0; print; prev = $0 }
	' "$report.tmp" >"$report"
	rm -f "$report.tmp"
	;;
*)
	rm -f "$report.tmp"
	msg="git lynx impact failed (exit $impact_status): $(last_error_line "$(cat "$err_file")")"
	problem "$impact_status" "$msg"
	write_failure_report "$msg"
	;;
esac
[[ -s "$err_file" ]] && cat "$err_file" >&2

# --- publish objects ----------------------------------------------------------
if [[ -n "$publish" ]]; then
	rc=0
	out="$("${lynx[@]}" objects export "$base" "$head" --to "$publish" --quiet 2>&1)" || rc=$?
	if ((rc == 0)); then
		echo "lynx-ci: exported objects for $base and $head to $publish" >&2
	else
		problem "$rc" "git lynx objects export failed (exit $rc): $(last_error_line "$out")"
	fi
fi

# --- summary ------------------------------------------------------------------
# The report's count line ("**1 changed, 0 added, 0 deleted definition** · …"), not the table header.
headline="$(grep -m1 -E '^\*\*[0-9]+ changed' "$report" 2>/dev/null || grep -m1 -E 'definitions' "$report" 2>/dev/null || true)"
headline="${headline//\*\*/}"
if [[ "$base_sha" == "$base"* && "$head_sha" == "$head"* ]]; then
	echo "Lynx impact of ${base}...${head}, indexed in ${index_secs}s"
else
	echo "Lynx impact of ${base}...${head} (${base_sha:0:12}...${head_sha:0:12}), indexed in ${index_secs}s"
fi
[[ -n "$headline" ]] && echo "  $headline"
[[ -n "$checks" ]] && sed 's/^/  /' <<<"$checks"
echo "  report: $report"
if ((${#warnings[@]})); then echo "  ${#warnings[@]} Lynx warning(s) above (not fatal unless LYNX_CI_STRICT=1)"; fi

if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
	cat "$report" >>"$GITHUB_STEP_SUMMARY" || true
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
	{
		echo "report=$report"
		echo "status=$impact_status"
		echo "checks-failed=$([[ $impact_status == 3 ]] && echo true || echo false)"
	} >>"$GITHUB_OUTPUT" || true
fi

if ((impact_status == 3)); then
	echo "lynx-ci: fail-on checks tripped (${fail_on[*]})" >&2
	exit 3
fi
finish 0
