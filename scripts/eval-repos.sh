#!/usr/bin/env bash
# Runs the retrieval evaluation (docs/EVALUATION.md) on the pinned repositories that
# scripts/bench-repos.sh fetched, writing one report per repository and mode to OUT.
#
# Usage:
#   scripts/eval-repos.sh DIR [OUT] [NAME...]
#     DIR   where scripts/bench-repos.sh put the clones (DIR/<name>)
#     OUT   where the reports go (default: docs/eval); OUT/<name>.<mode>.json
#     NAME  only these repos (gson black tokio core); default: all four
#
# Environment:
#   LYNX            the binary to measure (default: git-lynx on PATH)
#   STATIC_MODEL    a static (model2vec) model folder (default: ../shared/models/minilm-static-256)
#   ONNX_MODEL      a transformer .onnx file; when it exists, dense-onnx and hybrid-onnx run too,
#                   on the repositories in ONNX_REPOS (default: "gson black"; embedding every
#                   revision with a transformer takes minutes per repository on two cores)
#   MODES           override the list of modes
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: scripts/eval-repos.sh DIR [OUT] [NAME...]}
out=${2:-$here/docs/eval}
shift $(( $# >= 2 ? 2 : 1 ))
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(gson black tokio core)
lynx=${LYNX:-git-lynx}
static=${STATIC_MODEL:-$here/../shared/models/minilm-static-256}
onnx=${ONNX_MODEL:-$here/../shared/models/all-MiniLM-L6-v2/onnx/model_int8.onnx}
onnx_repos=" ${ONNX_REPOS:-gson black} "
mkdir -p "$out"
out=$(cd "$out" && pwd)

for name in "${names[@]}"; do
  q=$here/docs/eval/$name.questions.json
  [[ -f $q ]] || { echo "no question file $q" >&2; exit 2; }
  modes=${MODES:-bm25-files sparse dense-static hybrid-static}
  if [[ -z ${MODES:-} && -f $onnx && $onnx_repos == *" $name "* ]]; then
    modes="$modes dense-onnx hybrid-onnx"
  fi
  for m in $modes; do
    case $m in
      bm25-files)    args=(--no-dense); mode=bm25-files ;;
      sparse)        args=(--no-dense); mode=sparse ;;
      dense-static)  args=(--model "$static"); mode=dense ;;
      hybrid-static) args=(--model "$static"); mode=hybrid ;;
      dense-onnx)    args=(--model "$onnx"); mode=dense ;;
      hybrid-onnx)   args=(--model "$onnx"); mode=hybrid ;;
      *) echo "unknown mode $m" >&2; exit 2 ;;
    esac
    echo "== $name $m" >&2
    (cd "$dir/$name" && "$lynx" -q "${args[@]}" evaluate run "$q" --mode "$mode" --per-question --save "$out/$name.$m.json" >/dev/null)
    python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['metrics']; print('   MRR %.3f  R@1 %.3f  R@10 %.3f' % (m['mrr'], m['recall_1'], m['recall_10']))" "$out/$name.$m.json" >&2
  done
done
