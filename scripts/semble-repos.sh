#!/usr/bin/env bash
# Fetch the pinned third-party repositories of the semble question sets (docs/eval/semble/,
# converted from semble's benchmark by scripts/semble-import.py). Nothing of theirs is
# vendored here: this script clones them (full history) and checks out the commit the
# questions are asked at (each question's "rev", the set's "commit").
#
# Usage:
#   scripts/semble-repos.sh [DIR] [NAME...]
#     DIR    where to put the clones (default: ./bench-repos/semble); each repo goes to DIR/<name>
#     NAME   only these repos (see REPOS below); default: all of them
#
#   LYNX_BENCH_MIRRORS=/path/to/mirrors scripts/semble-repos.sh [DIR] [NAME...]
#     clone from local bare repositories instead of GitHub: the directory holds
#     <owner>+<name>/repo (e.g. encode+httpx/repo). The clone's `origin` is then pointed at
#     GitHub, so the result looks the same either way. A repo missing from the mirror
#     directory is cloned from GitHub.
#
# Re-running is safe: an existing clone is reused (fetched only if the commit is missing) and
# checked out at the commit (detached HEAD).
#
# Then, e.g.:
#   cd bench-repos/semble/httpx && git lynx evaluate run "$OLDPWD/docs/eval/semble/httpx.questions.json" --split dev
#
# Not here: the repositories reserved for a later evaluation (see docs/eval/semble/README.md),
# gson (it has a Lynx set of its own, scripts/bench-repos.sh), zig (its snapshot was over the
# size limit of the mirror this was prepared from) and messagepack-csharp (its snapshot ended
# in 2021, years before semble's pin): none of those three has a question set here.
set -euo pipefail

# name  owner/name  commit the questions are asked at  [semble's own pin, when that differs:
# the snapshot the sets were prepared from predates the pin, so its default-branch tip is used;
# a GitHub clone has both]
REPOS=(
  "aiohttp              aio-libs/aiohttp                 fc67cfdfd7d4bbf53ef76515fae69726626fe256"
  "fastapi              fastapi/fastapi                  c3c9dd6b1a08bcda766e7b43eafe72c4c5e9e193"
  "httpx                encode/httpx                     ae1b9f66238f75ced3ced5e4485408435de10768  b5addb64f0161ff6bfe94c124ef76f6a1fba5254"
  "model2vec            MinishLab/model2vec              b3012ee04e41c634383a5d735cb3c7c51e806a18"
  "pydantic             pydantic/pydantic                82c15f0ba8a9f8d8d6ba595df73ad20e2ee2eccf"
  "starlette            encode/starlette                 cb8f84f5284dc301ca7a31eb732b9e140769dd48  1894d0d89badf43bc8bfe03ed221a8b2e100b2ab"
  "axios                axios/axios                      23a25af0688d1db2c396deb09229d2271cc24f6c  c7a76ddbf277db864ee6cfb4ef17b8a08ffbe3f5"
  "redux                reduxjs/redux                    aaa04ae8402ba2caba55a9c75bfa8d3df6c78f8c"
  "cobra                spf13/cobra                      61968e893eee2f27696c2fbc8e34fa5c4afaf7c4"
  "chi                  go-chi/chi                       a54874f0e2f12647a19e82ee70dfa8185014100c"
  "commons-lang         apache/commons-lang              0ba92dc402312a38252a3398931ffbfbb4a88f7d"
  "jackson-databind     FasterXML/jackson-databind       1845f3327b56d70a247fbf0af0977065734e6695  e30139539416f69f1d7ae31c7e1d6da5b25bf362"
  "guzzle               guzzle/guzzle                    2779e868a00289e1b1fd854af030c43a06f4bcb4  fb92d95f80a9da51bf8f2a5b26d8e8ea3b6d99ed"
  "laravel-framework    laravel/framework                0dcc8d2ba7f41bc8376a08e9ccd5d7b83e6a6d90"
  "sinatra              sinatra/sinatra                  f891dd2b6f4911e356600efe6c3b82af97d262c6"
  "rails                rails/rails                      75f9e28379ac7418b82fa950cfa81f6147275308"
  "tokio                tokio-rs/tokio                   5db10f538b683fe88d699dfd11be31d193db011c"
  "trpc                 trpc/trpc                        c188dab0822caf3615199e4ac95147bc7560d26f"
  "ktor                 ktorio/ktor                      5913745a96101e8c78e47565e52d2baa8414441f"
  "cats                 typelevel/cats                   2102251a2f24a6ee14e087fc5da7768d267f2d6e"
  "click                pallets/click                    04ef3a6f473deb2499721a8d11f92a7d2c0912f2"
  "serde                serde-rs/serde                   fa7da4a93567ed347ad0735c28e439fca688ef26"
  "nlohmann-json        nlohmann/json                    199dea11b17c533721b26249e2dcaee6ca1d51d3  3946872265598aed5a7aea68cad4d9d1f168bd4b"
  "phoenix              phoenixframework/phoenix         c88da921ef8009e0aca8643d5334585cd35d5573"
  "vitest               vitest-dev/vitest                596f73986abe2161a9a06f0ca03df68e82690b21"
  "kotlinx-coroutines   Kotlin/kotlinx.coroutines        643c1aa554139a82f60724a59e79b801f303fdfe"
  "circe                circe/circe                      1da94272096eedd88a6ea04be127618ef8cf943a  cd16ce270257daec47f4a011163a03da5df9a630"
  "http4s               http4s/http4s                    95ece6c737c835587caf14658dee22862f46a28d  9f17a8e727d22692e637b5f01de15a222fb66092"
  "vapor                vapor/vapor                      cfd8f434843ac7850e2d97f46c1aa5ddb906cf1c"
  "snapkit              SnapKit/SnapKit                  2842e6e84e82eb9a8dac0100ca90d9444b0307f4  19f59a63f0faac287f4e59986959859d81ec851c"
  "plug                 elixir-plug/plug                 47649aa7bb910f481b66cc3e98c14b2c3b761c3c"
  "ecto                 elixir-ecto/ecto                 cf3a5b7219a552c24aae24bf5eef7354c1184b8a"
  "abseil-cpp           abseil/abseil-cpp                b9536c952c6f6bbcb37a5edb4fa88ee62d27cd7e"
  "curl                 curl/curl                        021a87cf81638af5317e142610ea0dd9f9fb4890"
  "redis                redis/redis                      4f8cdc2a1ea53e42955af758aabffee67cb455dd  47575618616b6419562356b0cfbd4b17bb443bdd"
  "bats-core            bats-core/bats-core              d9faff0d7bc32e7adebc6552446f978118d3ab3b"
  "aeson                haskell/aeson                    cd59793ca2405353ecee65f25b18ad7610104914"
  "telescope.nvim       nvim-telescope/telescope.nvim    471eebb1037899fd942cc0f52c012f8773505da1"
  "lazy.nvim            folke/lazy.nvim                  306a05526ada86a7b30af95c5cc81ffba93fef97"
  "nvm                  nvm-sh/nvm                       d200a215594bdda07e130117c9d392fff29cba84"
  "bash-it              Bash-it/bash-it                  0f04edce0ca93fbe66f1fe23c8d9b7a01e53f94c  d281c8265f3c48b8276624d46284a3599d359a75"
  "pandoc               jgm/pandoc                       d9838eba11ae18216f52e233dbbca735f0f97ccb"
  "xmonad               xmonad/xmonad                    59107a6c6f30d82d74449795a5c9149503f176ac"
  "mini.nvim            echasnovski/mini.nvim            b5bae7dd5802b47bb03babfb374fdfdab02b9d8b  29447d7b0e1fc9bc9d0384953e63be3fae816736"
  "zls                  zigtools/zls                     295cedd8ddd040c77e6666ddab6ef6da8c0beffa"
  "zig-clap             Hejsil/zig-clap                  fc1e5cc3f6d9d3001112385ee6256d694e959d2f"
)


source "$(dirname "$0")/lib/pinned-clones.sh"
pinned_clones semble-repos "${1:-./bench-repos/semble}" "${@:2}"
