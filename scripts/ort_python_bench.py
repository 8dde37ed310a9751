"""onnxruntime's own Python API on the same model and inputs as Lynx's transformer embedder
(used by `cargo bench --bench embed`): tokenize with truncation 256 and padding to the longest
of each batch, batches of 32 sorted by length, mean pooling over the attention mask, L2
normalisation. Prints {"seconds", "per_s", "first"} as JSON.

    python3 scripts/ort_python_bench.py MODEL_DIR MODEL.onnx TEXTS.json THREADS
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model_dir, onnx_path, texts_path, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
texts = json.load(open(texts_path))
cfg = json.load(open(f"{model_dir}/sentence_bert_config.json"))
max_len = cfg.get("max_seq_length", 256)
tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
tok.enable_truncation(max_len)
tok.enable_padding(pad_id=0, pad_token="[PAD]")
opts = ort.SessionOptions()
opts.intra_op_num_threads = threads
sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
names = [i.name for i in sess.get_inputs()]
cut = [t[: max_len * 8] for t in texts]


def embed(batch):
    enc = tok.encode_batch(batch)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.zeros_like(ids)
    out = sess.run(None, feed)[0]
    m = mask[:, :, None].astype(np.float32)
    v = (out * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


embed(cut[:8])
order = sorted(range(len(cut)), key=lambda i: len(cut[i]))
result = [None] * len(cut)
start = time.perf_counter()
for b in range(0, len(order), 32):
    idx = order[b : b + 32]
    vecs = embed([cut[i] for i in idx])
    for j, i in enumerate(idx):
        result[i] = vecs[j]
secs = time.perf_counter() - start
print(json.dumps({"seconds": secs, "per_s": len(cut) / secs, "first": [float(x) for x in result[0]]}))
