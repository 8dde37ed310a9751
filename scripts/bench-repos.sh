#!/usr/bin/env bash
# Fetch the pinned third-party repositories used by the retrieval evaluation (docs/eval/) and
# the indexing benchmarks (benches/index_search.rs). Nothing of theirs is vendored here: this
# script clones them (full history: the evaluation asks questions at past revisions, and the
# indexing benchmark walks back a few hundred commits) and checks out the pinned commit.
#
# Usage:
#   scripts/bench-repos.sh [DIR] [NAME...]
#     DIR    where to put the clones (default: ./bench-repos); each repo goes to DIR/<name>
#     NAME   only these repos (see REPOS below); default: all of them
#
#   LYNX_BENCH_MIRRORS=/path/to/mirrors scripts/bench-repos.sh [DIR] [NAME...]
#     clone from local bare repositories instead of GitHub: the directory holds
#     <owner>+<name>/repo (e.g. google+gson/repo). The clone's `origin` is then pointed at
#     GitHub, so the result looks the same either way. A repo missing from the mirror
#     directory is cloned from GitHub.
#
# Re-running is safe: an existing clone is reused (fetched only if the pinned commit is
# missing) and checked out at the pinned commit (detached HEAD).
#
# Then, e.g.:
#   cd bench-repos/gson && git lynx --no-dense evaluate run "$OLDPWD/docs/eval/gson.questions.json" --mode sparse
#   cargo bench --bench index_search -- bench-repos/prometheus
set -euo pipefail

# name  owner/name  pinned commit  (the questions in docs/eval/<name>.questions.json were mined,
# and those in docs/eval/annotated/<name>.questions.json written, at these)
REPOS=(
  "gson        google/gson             9835b6f90192f79cdf5300c528fc6212455fb6c1"
  "black       psf/black               8947c48ef2077c3a301b03c1e814dc2e3f78436e"
  "tokio       tokio-rs/tokio          ea91b33ca57ff0581b38e735cc108f831bccbdaa"
  "core        vuejs/core              e2bede96134f757aad5c5b33ac9be055022dbfc8"
  "prometheus  prometheus/prometheus   d15adb9ad7e5d9fbde3a9a8f30200593a5a14d86"
  "jq          jqlang/jq               579e6f76cffd7643ba4002a2c3618a5ea710589a"
  "leveldb     google/leveldb          78a352f47ed6c1e9d750545e9b242289185b87e1"
  "polly       App-vNext/Polly         173d6d1d2e28a4697f1ac1d22da68f77ff19a0c9"
  "guzzle      guzzle/guzzle           2779e868a00289e1b1fd854af030c43a06f4bcb4"
  "jekyll      jekyll/jekyll           202df571314ba1d18e9fccd81d12aaad4a703c38"
  "okhttp      square/okhttp           1682d9bac8c03dffde2969b0b74d47649d0dbb52"
  "click       pallets/click           2c8cd3ac958a7eb316d67f2d316c27086c4c0369"
  "axios       axios/axios             23a25af0688d1db2c396deb09229d2271cc24f6c"
  "cobra       spf13/cobra             adbc8813901bba65827259daa8e22ff94ec1f30e"
  "bats-core   bats-core/bats-core     d22e41faad59f5fd942a88c992b4913a27a460c4"
  "kingfisher  onevcat/Kingfisher      410984bf301f4fa224fe56277b3f8672cc465c79"
  "scopt       scopt/scopt             75cd14c9e1f517e9d1beb8de9e3427e40630f1cb"
  "urfave-cli  urfave/cli              1305a08200f7c4d873e28bd2bbad1ff257c6cfc4"
  "swift-argument-parser  apple/swift-argument-parser  2f77f2fccb6e84fecff338c37b199e33e7dfd119"
  "scala-js    scala-js/scala-js       70fd9f8002c1441ef34253d53d155fc5b51c26fc"
  "lualine.nvim  nvim-lualine/lualine.nvim  221ce6b2d999187044529f49da6554a92f740a96"
  "kong        Kong/kong               22246ef28c16842098369b494eef879222e30c7b"
  "bash-completion  scop/bash-completion    85661b2563340a85304c4fd41582c2dd97c549f5"
  "mocha       mochajs/mocha           e6b9ee773481fd739ae24caeb42f32ac0b010f95"
  "flex        FLEXTool/FLEX           63a6f588841e94e4c3adaa045ff16eb8163f0bb4"
  "sdwebimage  SDWebImage/SDWebImage   36e79ba485e9bb4d3cd4e3318908866dac5e7b51"
  "kotlinpoet  square/kotlinpoet       be2de914ce6eb3694092ed4e0f28626cbce1ffe0"
  "trpc        trpc/trpc               340811ba5320637fbaf48fccf3dbfdd258bd34db"
  "date-fns    date-fns/date-fns       dd66398305c2b015fba3c1b3d31ccff42ee8d4cf"
)


source "$(dirname "$0")/lib/pinned-clones.sh"
pinned_clones bench-repos "${1:-./bench-repos}" "${@:2}"
