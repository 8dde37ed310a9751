#!/usr/bin/env python3
"""Generate the tiny, deterministic test-fixture models used by the Rust tests.

Usage:
    python3 scripts/make_test_models.py [OUT_DIR]        # default: tests/fixtures/models

Requirements (build AND verify; nothing is downloaded except these packages):
    python3 -m venv /tmp/fixvenv
    /tmp/fixvenv/bin/pip install onnx numpy onnxruntime tokenizers safetensors
    /tmp/fixvenv/bin/python scripts/make_test_models.py

Produced with onnx 1.23.2, onnxruntime 1.32.0, numpy 2.4.6, tokenizers 0.23.3,
safetensors 0.8.0. Every random number comes from numpy's legacy RandomState
with a fixed seed, so re-running the script reproduces the same bytes (the int8
model's bytes may change with another onnxruntime version; its numbers should not
change much).

What it writes under OUT_DIR (see OUT_DIR/README.md for details and reference values):
    tiny-bert/           sentence-embedding transformer (mean pooling), HF repo layout,
                         onnx/model.onnx (fp32) + onnx/model_int8.onnx (dynamic QInt8)
    tiny-bge-cls/        same architecture, other seed, CLS pooling
    tiny-cross-encoder/  cross-encoder (ms-marco-MiniLM style), output `logits` [batch, 1]
    tiny-static/         model2vec static model, embeddings F16 [vocab, 16]
    tiny-static-f32/     the same static model with F32 embeddings (unrounded values)
    README.md            description + reference values (human-readable)
    reference.json       the same reference values (machine-readable)

All HF tokenizer.json files share one WordPiece vocabulary:
    [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4   (deliberately NOT BERT's 0/100/101/102/103)
The transformer tokenizers ship `"truncation": {"max_length": 16}` and
`"padding": {"strategy": {"Fixed": 16}}` on purpose: the Rust side must override them
(the reference values use max length 64 and padding to the longest in the batch).

After building, the script verifies everything with onnxruntime and tokenizers and
exits non-zero if any check fails.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
HIDDEN = 32
INTERMEDIATE = 64
MAX_POS = 128
SEQ_LEN_ST = 64          # sentence_bert_config.json max_seq_length
TOK_TRUNC = 16           # deliberately small truncation/padding in tokenizer.json
STATIC_DIM = 16
ATTN_SCALE_CLS = 3.0     # attention-output scale of the CLS-pooling model
CE_DIM = 16

SEEDS = {
    "tiny-bert": 1234,
    "tiny-bge-cls": 5678,
    "tiny-cross-encoder": 4242,
    "tiny-static": 777,
}

# ---------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = 0, 1, 2, 3, 4
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
LETTERS = list("abcdefghijklmnopqrstuvwxyz")
DIGITS = list("0123456789")

STOPWORDS = """the an and or not of to in on for with from by at as is are be this that it
all into over each between how what when where which""".split()

WORDS = """the an and or not of to in on for with from by at as is are be this that it
all new get set use make find show how what when where which between into over each
more one two first last hello world test example data value name type code text line
number time date size key word
def fn function func class struct enum impl trait pub let mut const static return if
else match while loop break continue import mod async await self none null true false
int float str string bool vec map dict list array option result ok err some main lib
crate package module assert print println log debug
parse parser json yaml toml xml csv config configuration settings file path dir
directory read write load save open close serialize deserialize format
http https request response server client url api route header body status post user
account login password auth token session send receive
error panic exception fail failed handle handler catch retry timeout
distance point compute vector matrix math sum mean sqrt angle length coordinate
euclidean f64 f32 i64 u64 usize
sort sorted search index query filter reduce iterate iterator item node tree graph
edge hash cache memory buffer stream byte thread lock mutex channel message event queue
database db sql table row column insert update delete select commit git branch merge
diff repo repository embedding model tokenize rust python""".split()

SUFFIXES = ["##s", "##es", "##ed", "##ing", "##er", "##ers", "##ly", "##ion", "##tion",
            "##al", "##ize", "##ity", "##ment", "##able", "##ness", "##ful", "##less",
            "##y", "##ic", "##ive"]

GROUPS = {
    "data": """parse parser json yaml toml xml csv config configuration settings file path
               dir directory read write load save open close serialize deserialize format
               string""".split(),
    "geometry": """distance point compute vector matrix math sum mean sqrt angle length
                   coordinate euclidean f64 f32 float number""".split(),
    "web": """http https request response server client url api route header body status
              get post user account login password auth token session async await send
              receive""".split(),
    "error": """error panic exception fail failed handle handler catch retry timeout result
                err ok return""".split(),
    "collections": """sort sorted search index query filter reduce iterate iterator item list
                      array vec map dict set node tree graph hash""".split(),
}


def build_vocab():
    toks = SPECIALS + PUNCT + DIGITS + LETTERS + WORDS + \
        ["##" + c for c in LETTERS + DIGITS] + SUFFIXES
    ordered = list(dict.fromkeys(toks))  # dedupe, keep first occurrence (deterministic)
    vocab = {t: i for i, t in enumerate(ordered)}
    assert vocab["[PAD]"] == PAD_ID and vocab["[UNK]"] == UNK_ID
    assert vocab["[CLS]"] == CLS_ID and vocab["[SEP]"] == SEP_ID and vocab["[MASK]"] == MASK_ID
    for g in GROUPS.values():
        for w in g:
            assert w in vocab, w
    return vocab


VOCAB = build_vocab()
V = len(VOCAB)
ID2TOK = {i: t for t, i in VOCAB.items()}

# ---------------------------------------------------------------------------
# Reference texts
# ---------------------------------------------------------------------------
QUERIES = ["parse json config", "compute distance between points"]
DOCUMENTS = [
    "def parse_json_config(file): return json.load(file)",
    "fn compute_distance(a: &Point, b: &Point) -> f64",
    "async fn handle_http_request(user: User) -> Result<Response, Error>",
]
# Contains a character that is not in the vocabulary -> [UNK] (dropped by the static model).
EXTRA = ["read the config file \U0001F980"]
TEXTS = QUERIES + DOCUMENTS + EXTRA
CE_PAIRS = [(q, d) for q in QUERIES for d in DOCUMENTS]

# Hand-written expectations used to verify the tokenizer (with special tokens).
EXPECTED_TOKENS = {
    "parse json config": ["[CLS]", "parse", "json", "config", "[SEP]"],
    "compute distance between points":
        ["[CLS]", "compute", "distance", "between", "point", "##s", "[SEP]"],
    "def parse_json_config(file)":
        ["[CLS]", "def", "parse", "_", "json", "_", "config", "(", "file", ")", "[SEP]"],
    "Hello, World!": ["[CLS]", "hello", ",", "world", "!", "[SEP]"],
    "read the config file \U0001F980": ["[CLS]", "read", "the", "config", "file", "[UNK]", "[SEP]"],
    "fn compute_distance(a: &Point, b: &Point) -> f64":
        ["[CLS]", "fn", "compute", "_", "distance", "(", "a", ":", "&", "point", ",", "b", ":",
         "&", "point", ")", "-", ">", "f64", "[SEP]"],
}


# ---------------------------------------------------------------------------
# tokenizer.json (hand-written in the tokenizers 0.2x serialisation format)
# ---------------------------------------------------------------------------
def tokenizer_json(post_processor=True, fixed_trunc_pad=True):
    added = [{"id": VOCAB[t], "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for t in SPECIALS]
    tp = None
    if post_processor:
        tp = {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
            ],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [CLS_ID], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [SEP_ID], "tokens": ["[SEP]"]},
            },
        }
    return {
        "version": "1.0",
        "truncation": ({"direction": "Right", "max_length": TOK_TRUNC,
                        "strategy": "LongestFirst", "stride": 0}
                       if fixed_trunc_pad else None),
        "padding": ({"strategy": {"Fixed": TOK_TRUNC}, "direction": "Right",
                     "pad_to_multiple_of": None, "pad_id": PAD_ID, "pad_type_id": 0,
                     "pad_token": "[PAD]"}
                    if fixed_trunc_pad else None),
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": tp,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": dict(VOCAB)},
    }


def write_json(path, obj, indent=2):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


# ---------------------------------------------------------------------------
# Shared embedding structure: words in the same topic group share a component
# ---------------------------------------------------------------------------
def topic_embeddings(rng, dim, noise, group_scale):
    emb = rng.standard_normal((V, dim)) * noise
    for name in sorted(GROUPS):
        gvec = rng.standard_normal(dim) * group_scale
        for w in GROUPS[name]:
            emb[VOCAB[w]] += gvec
    return emb.astype(np.float32)


def f32(a):
    return np.asarray(a, dtype=np.float32)


# ---------------------------------------------------------------------------
# ONNX: tiny BERT-like encoder (1 layer, 1 head)
# ---------------------------------------------------------------------------
def make_bert_onnx(seed, name, attn_scale=0.7, q_scale=1.5, identity_mix=False):
    rng = np.random.RandomState(seed)
    d, di = HIDDEN, INTERMEDIATE
    word = topic_embeddings(rng, d, noise=0.6, group_scale=1.0)
    pos = f32(rng.standard_normal((MAX_POS, d)) * 0.1)
    typ = f32(rng.standard_normal((2, d)) * 0.1)

    def lin(i, o, scale=1.0):
        return (f32(rng.standard_normal((i, o)) * scale / math.sqrt(i)),
                f32(rng.standard_normal(o) * 0.02))

    ln = [(f32(1.0 + 0.1 * rng.standard_normal(d)), f32(0.05 * rng.standard_normal(d)))
          for _ in range(3)]
    wq, bq = lin(d, d, q_scale)
    wk, bk = lin(d, d, 1.5)
    wv, bv = lin(d, d)
    wo, bo = lin(d, d, attn_scale)
    if identity_mix:
        # CLS-pooling model: near-uniform attention and identity-like value/output
        # projections, so the [CLS] row carries a (masked) mean of the sentence's tokens.
        eye = np.eye(d, dtype=np.float32)
        wv = f32(eye + 0.3 * wv)
        wo = f32(attn_scale * (eye + 0.3 * wo / attn_scale))
    w1, b1 = lin(d, di, 1.2)
    w2, b2 = lin(di, d, 0.7)

    inits = {
        "embeddings.word_embeddings.weight": word,
        "embeddings.position_embeddings.weight": pos,
        "embeddings.token_type_embeddings.weight": typ,
        "embeddings.LayerNorm.weight": ln[0][0], "embeddings.LayerNorm.bias": ln[0][1],
        "attention.query.weight": wq, "attention.query.bias": bq,
        "attention.key.weight": wk, "attention.key.bias": bk,
        "attention.value.weight": wv, "attention.value.bias": bv,
        "attention.output.dense.weight": wo, "attention.output.dense.bias": bo,
        "attention.output.LayerNorm.weight": ln[1][0],
        "attention.output.LayerNorm.bias": ln[1][1],
        "intermediate.dense.weight": w1, "intermediate.dense.bias": b1,
        "output.dense.weight": w2, "output.dense.bias": b2,
        "output.LayerNorm.weight": ln[2][0], "output.LayerNorm.bias": ln[2][1],
        "const.one_i64": np.array(1, dtype=np.int64),
        "const.zero_i64": np.array(0, dtype=np.int64),
        "const.axes1": np.array([1], dtype=np.int64),
        "const.one_f": f32(1.0),
        "const.neg_big": f32(-10000.0),
        "const.inv_sqrt_d": f32(1.0 / math.sqrt(d)),
    }
    N = helper.make_node
    nodes = [
        # embeddings
        N("Gather", ["embeddings.word_embeddings.weight", "input_ids"], ["emb.word"], axis=0),
        N("Shape", ["input_ids"], ["shape"]),
        N("Gather", ["shape", "const.one_i64"], ["seq_len"], axis=0),
        N("Range", ["const.zero_i64", "seq_len", "const.one_i64"], ["position_ids"]),
        N("Gather", ["embeddings.position_embeddings.weight", "position_ids"], ["emb.pos"], axis=0),
        N("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"], ["emb.type"], axis=0),
        N("Add", ["emb.word", "emb.pos"], ["emb.sum0"]),
        N("Add", ["emb.sum0", "emb.type"], ["emb.sum"]),
        N("LayerNormalization", ["emb.sum", "embeddings.LayerNorm.weight",
                                 "embeddings.LayerNorm.bias"], ["h0"], axis=-1, epsilon=1e-12),
        # extended attention mask: (1 - mask) * -10000, shape [B, 1, S]
        N("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        N("Sub", ["const.one_f", "mask_f"], ["mask_inv"]),
        N("Mul", ["mask_inv", "const.neg_big"], ["mask_add2"]),
        N("Unsqueeze", ["mask_add2", "const.axes1"], ["mask_add"]),
        # single-head self-attention
        N("MatMul", ["h0", "attention.query.weight"], ["q0"]),
        N("Add", ["q0", "attention.query.bias"], ["q"]),
        N("MatMul", ["h0", "attention.key.weight"], ["k0"]),
        N("Add", ["k0", "attention.key.bias"], ["k"]),
        N("MatMul", ["h0", "attention.value.weight"], ["v0"]),
        N("Add", ["v0", "attention.value.bias"], ["v"]),
        N("Transpose", ["k"], ["kT"], perm=[0, 2, 1]),
        N("MatMul", ["q", "kT"], ["scores0"]),
        N("Mul", ["scores0", "const.inv_sqrt_d"], ["scores1"]),
        N("Add", ["scores1", "mask_add"], ["scores"]),
        N("Softmax", ["scores"], ["probs"], axis=-1),
        N("MatMul", ["probs", "v"], ["ctx"]),
        N("MatMul", ["ctx", "attention.output.dense.weight"], ["ao0"]),
        N("Add", ["ao0", "attention.output.dense.bias"], ["ao"]),
        N("Add", ["h0", "ao"], ["res1"]),
        N("LayerNormalization", ["res1", "attention.output.LayerNorm.weight",
                                 "attention.output.LayerNorm.bias"], ["h1"], axis=-1, epsilon=1e-12),
        # position-wise MLP
        N("MatMul", ["h1", "intermediate.dense.weight"], ["f0"]),
        N("Add", ["f0", "intermediate.dense.bias"], ["f1"]),
        N("Tanh", ["f1"], ["f2"]),
        N("MatMul", ["f2", "output.dense.weight"], ["f3"]),
        N("Add", ["f3", "output.dense.bias"], ["f4"]),
        N("Add", ["h1", "f4"], ["res2"]),
        N("LayerNormalization", ["res2", "output.LayerNorm.weight", "output.LayerNorm.bias"],
          ["last_hidden_state"], axis=-1, epsilon=1e-12),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             ["batch", "sequence", HIDDEN])]
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    return finish_model(graph, f"{name}: 1-layer 1-head BERT-like test encoder (seed {seed})")


def finish_model(graph, doc):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="make_test_models.py", producer_version="1",
                              ir_version=IR_VERSION)
    model.doc_string = doc
    onnx.checker.check_model(model, full_check=True)
    return model


# ---------------------------------------------------------------------------
# ONNX: tiny cross-encoder
#   logit = 1.5 * sum_v w_v * [v in segment A] * [v in segment B]
#         + 0.5 * small neural term on the masked-mean token embedding
#         - 3.0
# ---------------------------------------------------------------------------
def overlap_weights():
    w = np.ones(V, dtype=np.float32)
    for t, i in VOCAB.items():
        if t in SPECIALS or t in PUNCT:
            w[i] = 0.0
        elif t.startswith("##") or len(t) == 1 or t in STOPWORDS:
            w[i] = 0.25
    return w


def make_cross_encoder_onnx(seed):
    rng = np.random.RandomState(seed)
    emb = topic_embeddings(rng, CE_DIM, noise=0.5, group_scale=1.0)
    temb = f32(rng.standard_normal((2, CE_DIM)) * 0.2)
    wn = f32(rng.standard_normal((CE_DIM, CE_DIM)) / math.sqrt(CE_DIM))
    bn = f32(rng.standard_normal(CE_DIM) * 0.05)
    wout = f32(rng.standard_normal((CE_DIM, 1)) / math.sqrt(CE_DIM))
    inits = {
        "overlap.weight": overlap_weights().reshape(V, 1),
        "embeddings.word_embeddings.weight": emb,
        "embeddings.token_type_embeddings.weight": temb,
        "pooler.dense.weight": wn, "pooler.dense.bias": bn,
        "classifier.weight": wout,
        "const.depth": np.array([V], dtype=np.int64),
        "const.onehot_values": f32([0.0, 1.0]),
        "const.one_f": f32(1.0),
        "const.axes1": np.array([1], dtype=np.int64),
        "const.axes2": np.array([2], dtype=np.int64),
        "const.overlap_scale": f32(1.5),
        "const.neural_scale": f32(0.5),
        "const.bias": f32(-3.0),
    }
    N = helper.make_node
    nodes = [
        N("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        N("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
        N("Sub", ["const.one_f", "type_f"], ["not_type_f"]),
        N("Mul", ["mask_f", "not_type_f"], ["mask_a2"]),
        N("Mul", ["mask_f", "type_f"], ["mask_b2"]),
        N("Unsqueeze", ["mask_a2", "const.axes2"], ["mask_a"]),
        N("Unsqueeze", ["mask_b2", "const.axes2"], ["mask_b"]),
        N("Unsqueeze", ["mask_f", "const.axes2"], ["mask3"]),
        # bag-of-words presence per segment
        N("OneHot", ["input_ids", "const.depth", "const.onehot_values"], ["onehot"], axis=-1),
        N("Mul", ["onehot", "mask_a"], ["onehot_a"]),
        N("Mul", ["onehot", "mask_b"], ["onehot_b"]),
        N("ReduceMax", ["onehot_a"], ["pres_a"], axes=[1], keepdims=0),
        N("ReduceMax", ["onehot_b"], ["pres_b"], axes=[1], keepdims=0),
        N("Mul", ["pres_a", "pres_b"], ["shared"]),
        N("MatMul", ["shared", "overlap.weight"], ["overlap"]),
        # small neural term
        N("Gather", ["embeddings.word_embeddings.weight", "input_ids"], ["e_word"], axis=0),
        N("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"], ["e_type"], axis=0),
        N("Add", ["e_word", "e_type"], ["e"]),
        N("Mul", ["e", "mask3"], ["e_masked"]),
        N("ReduceSum", ["e_masked", "const.axes1"], ["e_sum"], keepdims=0),
        N("ReduceSum", ["mask3", "const.axes1"], ["n_tok"], keepdims=0),
        N("Div", ["e_sum", "n_tok"], ["e_mean"]),
        N("MatMul", ["e_mean", "pooler.dense.weight"], ["p0"]),
        N("Add", ["p0", "pooler.dense.bias"], ["p1"]),
        N("Tanh", ["p1"], ["pooled"]),
        N("MatMul", ["pooled", "classifier.weight"], ["neural"]),
        # combine
        N("Mul", ["overlap", "const.overlap_scale"], ["t1"]),
        N("Mul", ["neural", "const.neural_scale"], ["t2"]),
        N("Add", ["t1", "t2"], ["t3"]),
        N("Add", ["t3", "const.bias"], ["logits"]),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])]
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, outputs,
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    return finish_model(graph, f"tiny-cross-encoder: token-overlap + tiny neural scorer (seed {seed})")


# ---------------------------------------------------------------------------
# safetensors (hand-written: 8-byte LE header length, JSON header, raw data)
# ---------------------------------------------------------------------------
def write_safetensors(path, name, arr):
    dtype = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32"}[arr.dtype]
    data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
    header = {name: {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [0, len(data)]}}
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)  # pad header to 8-byte alignment (like the safetensors lib)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        f.write(data)


# ---------------------------------------------------------------------------
# Writing the model directories
# ---------------------------------------------------------------------------
def save_onnx(model, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save_model(model, path)


def bert_config(name, extra=None):
    cfg = {
        "_name_or_path": name,
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": V,
        "hidden_size": HIDDEN,
        "num_hidden_layers": 1,
        "num_attention_heads": 1,
        "intermediate_size": INTERMEDIATE,
        "hidden_act": "tanh",
        "max_position_embeddings": MAX_POS,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "pad_token_id": PAD_ID,
        "torch_dtype": "float32",
    }
    cfg.update(extra or {})
    return cfg


def pooling_config(mode):
    return {
        "word_embedding_dimension": HIDDEN,
        "pooling_mode_cls_token": mode == "cls",
        "pooling_mode_mean_tokens": mode == "mean",
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    }


MODULES_JSON = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]


def write_sentence_model(out, name, seed, pooling, with_int8, **arch):
    d = os.path.join(out, name)
    save_onnx(make_bert_onnx(seed, name, **arch), os.path.join(d, "onnx", "model.onnx"))
    if with_int8:
        quantize_int8(os.path.join(d, "onnx", "model.onnx"), os.path.join(d, "onnx", "model_int8.onnx"))
    write_json(os.path.join(d, "tokenizer.json"), tokenizer_json(True, True))
    write_json(os.path.join(d, "config.json"), bert_config(name))
    write_json(os.path.join(d, "1_Pooling", "config.json"), pooling_config(pooling))
    write_json(os.path.join(d, "sentence_bert_config.json"),
               {"max_seq_length": SEQ_LEN_ST, "do_lower_case": False})
    write_json(os.path.join(d, "modules.json"), MODULES_JSON)


def quantize_int8(src, dst):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    with tempfile.TemporaryDirectory() as td:
        tmp = os.path.join(td, "q.onnx")
        quantize_dynamic(src, tmp, weight_type=QuantType.QInt8, per_channel=True)
        m = onnx.load(tmp)
        m.doc_string = "dynamic QInt8 (per-channel) quantisation of model.onnx"
        onnx.save_model(m, dst)


def write_cross_encoder(out):
    d = os.path.join(out, "tiny-cross-encoder")
    save_onnx(make_cross_encoder_onnx(SEEDS["tiny-cross-encoder"]), os.path.join(d, "onnx", "model.onnx"))
    write_json(os.path.join(d, "tokenizer.json"), tokenizer_json(True, True))
    write_json(os.path.join(d, "config.json"), bert_config("tiny-cross-encoder", {
        "architectures": ["BertForSequenceClassification"],
        "hidden_size": CE_DIM,
        "num_labels": 1,
        "id2label": {"0": "LABEL_0"},
        "label2id": {"LABEL_0": 0},
        "sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity",
    }))


def static_embeddings():
    rng = np.random.RandomState(SEEDS["tiny-static"])
    return topic_embeddings(rng, STATIC_DIM, noise=0.5, group_scale=1.0)


def write_static(out):
    emb32 = static_embeddings()
    emb16 = emb32.astype(np.float16)
    for name, arr in (("tiny-static", emb16), ("tiny-static-f32", emb32)):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        write_safetensors(os.path.join(d, "model.safetensors"), "embeddings", arr)
        # post_processor with [CLS]/[SEP] is kept on purpose (real model2vec tokenizers have
        # one): the static model must encode with add_special_tokens = false.
        write_json(os.path.join(d, "tokenizer.json"), tokenizer_json(True, False))
        write_json(os.path.join(d, "config.json"), {
            "model_type": "model2vec",
            "architectures": ["StaticModel"],
            "tokenizer_name": "tiny-test-wordpiece",
            "apply_pca": None,
            "apply_zipf": False,
            "hidden_dim": STATIC_DIM,
            "seq_length": 1000000,
            "normalize": True,
        })
    return emb16, emb32


# ---------------------------------------------------------------------------
# Inference helpers (reference computation) and verification
# ---------------------------------------------------------------------------
class CheckError(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise CheckError(msg)
    print(f"  ok: {msg}")


def load_tokenizer(path):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return tok


def encode_batch(tok, texts, max_len, pairs=False):
    """Encode with special tokens, truncate to max_len, pad to the longest (pad id 0)."""
    tok.enable_truncation(max_len)
    encs = tok.encode_batch(texts, add_special_tokens=True)
    tok.no_truncation()
    S = max(len(e.ids) for e in encs)
    ids = np.zeros((len(encs), S), dtype=np.int64)
    mask = np.zeros_like(ids)
    tt = np.zeros_like(ids)
    for i, e in enumerate(encs):
        n = len(e.ids)
        ids[i, :n] = e.ids
        mask[i, :n] = e.attention_mask
        tt[i, :n] = e.type_ids
    return ids, mask, tt


def l2n(x):
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(n, 1e-12)


def run_encoder(sess, tok, texts, pooling):
    ids, mask, tt = encode_batch(tok, texts, SEQ_LEN_ST)
    (h,) = sess.run(["last_hidden_state"],
                    {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})
    if not (h.shape == (len(texts), ids.shape[1], HIDDEN) and h.dtype == np.float32):
        raise CheckError(f"last_hidden_state has shape {h.shape} dtype {h.dtype}")
    if pooling == "mean":
        m = mask[..., None].astype(np.float64)
        pooled = (h.astype(np.float64) * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    else:
        pooled = h[:, 0, :].astype(np.float64)
    return l2n(pooled)


def static_encode(tok, emb, texts):
    encs = tok.encode_batch(texts, add_special_tokens=False)
    out, all_ids = [], []
    table = emb.astype(np.float32)
    for e in encs:
        ids = [i for i in e.ids if i != UNK_ID]
        all_ids.append(ids)
        out.append(table[ids].astype(np.float64).mean(0) if ids else np.zeros(table.shape[1]))
    return l2n(np.stack(out)), all_ids


def run_ce(sess, tok, pairs):
    ids, mask, tt = encode_batch(tok, pairs, 512)
    (lg,) = sess.run(["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})
    if not (lg.shape == (len(pairs), 1) and lg.dtype == np.float32):
        raise CheckError(f"logits has shape {lg.shape} dtype {lg.dtype}")
    return lg[:, 0].astype(np.float64)


def rnd(x, nd=6):
    return [round(float(v), nd) for v in np.ravel(x)]


def verify_and_reference(out):
    import onnxruntime as ort
    from safetensors.numpy import load_file

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3

    def sess(path):
        return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    ref = {
        "generator": "python3 scripts/make_test_models.py tests/fixtures/models",
        "tolerance": 1e-4,
        "tokenizer": {"pad_id": PAD_ID, "unk_id": UNK_ID, "cls_id": CLS_ID, "sep_id": SEP_ID,
                      "mask_id": MASK_ID, "vocab_size": V},
        "texts": TEXTS,
        "queries": QUERIES,
        "documents": DOCUMENTS,
        "token_ids_with_special_tokens": {},
        "static_token_ids": {},
    }

    print("== tokenizers")
    tok_paths = {n: os.path.join(out, n, "tokenizer.json") for n in
                 ("tiny-bert", "tiny-bge-cls", "tiny-cross-encoder", "tiny-static", "tiny-static-f32")}
    for n, p in tok_paths.items():
        from tokenizers import Tokenizer
        raw = Tokenizer.from_file(p)
        check(raw.get_vocab_size() == V, f"{n}: tokenizer loads, vocab size {V}")
        check(json.loads(raw.to_str()) == json.load(open(p, encoding="utf-8")),
              f"{n}: tokenizer.json round-trips unchanged through tokenizers")
        if n in ("tiny-bert", "tiny-bge-cls", "tiny-cross-encoder"):
            tj = json.load(open(p, encoding="utf-8"))
            check(tj["truncation"]["max_length"] == TOK_TRUNC and
                  tj["padding"]["strategy"] == {"Fixed": TOK_TRUNC},
                  f"{n}: ships truncation 16 / padding Fixed(16)")
            e = raw.encode(DOCUMENTS[2])
            check(len(e.ids) == TOK_TRUNC, f"{n}: as shipped, encodes to exactly 16 ids")
    tok = load_tokenizer(tok_paths["tiny-bert"])
    for text, toks in EXPECTED_TOKENS.items():
        e = tok.encode(text)
        check(e.tokens == toks and e.ids == [VOCAB[t] for t in toks],
              f"tokens for {text!r}: {e.tokens}")
    pe = tok.encode("parse json", "json file")
    check(pe.tokens == ["[CLS]", "parse", "json", "[SEP]", "json", "file", "[SEP]"] and
          pe.type_ids == [0, 0, 0, 0, 1, 1, 1], "pair template [CLS] A [SEP] B [SEP], type ids 0/1")
    stok = load_tokenizer(tok_paths["tiny-static"])
    se = stok.encode("read the config file \U0001F980", add_special_tokens=False)
    check(se.tokens == ["read", "the", "config", "file", "[UNK]"],
          "static tokenizer without special tokens keeps [UNK] (to be dropped by the model)")
    for t in TEXTS:
        ref["token_ids_with_special_tokens"][t] = tok.encode(t).ids
    lens = [len(v) for v in ref["token_ids_with_special_tokens"].values()]
    check(max(lens) > TOK_TRUNC, f"some reference texts are longer than 16 tokens ({lens})")

    print("== sentence encoders")
    for name, pooling in (("tiny-bert", "mean"), ("tiny-bge-cls", "cls")):
        p = os.path.join(out, name, "onnx", "model.onnx")
        m = onnx.load(p)
        check(m.ir_version == IR_VERSION and m.opset_import[0].version == OPSET,
              f"{name}: ir_version {m.ir_version}, opset {m.opset_import[0].version}")
        s = sess(p)
        check([i.name for i in s.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]
              and [o.name for o in s.get_outputs()] == ["last_hidden_state"], f"{name}: io names")
        emb = run_encoder(s, tok, TEXTS, pooling)
        alone = np.concatenate([run_encoder(s, tok, [t], pooling) for t in TEXTS])
        check(np.abs(emb - alone).max() < 1e-5,
              f"{name}: batch (padded) == one-by-one, max diff {np.abs(emb - alone).max():.2e}")
        # extra padding after the real tokens must not matter either
        ids, mask, tt = encode_batch(tok, [QUERIES[0]], SEQ_LEN_ST)
        pad = 20
        ids2 = np.pad(ids, ((0, 0), (0, pad)))
        mask2 = np.pad(mask, ((0, 0), (0, pad)))
        tt2 = np.pad(tt, ((0, 0), (0, pad)))
        h1 = s.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})[0]
        h2 = s.run(None, {"input_ids": ids2, "attention_mask": mask2, "token_type_ids": tt2})[0]
        n = ids.shape[1]
        check(np.abs(h1 - h2[:, :n]).max() < 1e-5,
              f"{name}: real-token outputs independent of trailing padding "
              f"(max diff {np.abs(h1 - h2[:, :n]).max():.2e})")
        # truncated to 16 (as the shipped tokenizer would do) gives a different vector
        tok.enable_truncation(TOK_TRUNC)
        trunc = run_encoder_ids(s, tok, DOCUMENTS[0], pooling)
        tok.no_truncation()
        cos_tr = float(trunc @ emb[TEXTS.index(DOCUMENTS[0])])
        check(cos_tr < 0.9999, f"{name}: truncating to 16 tokens changes the embedding (cos {cos_tr:.4f})")
        cos = emb @ emb.T
        check(cos[0, 2] > cos[0, 3] and cos[1, 3] > cos[1, 2],
              f"{name}: queries closest to their matching documents "
              f"(q0: {cos[0, 2]:.3f} > {cos[0, 3]:.3f}; q1: {cos[1, 3]:.3f} > {cos[1, 2]:.3f})")
        ref[name] = {
            "pooling": pooling,
            "max_length": SEQ_LEN_ST,
            "padding": "longest",
            "normalized": True,
            "embeddings": {t: rnd(emb[i]) for i, t in enumerate(TEXTS)},
            "cosine": [rnd(r) for r in cos],
        }
        if name == "tiny-bert":
            pq = os.path.join(out, name, "onnx", "model_int8.onnx")
            mq = onnx.load(pq)
            sq = sess(pq)
            qemb = run_encoder(sq, tok, TEXTS, "mean")
            qcos = (qemb * emb).sum(1)
            check(qcos.min() > 0.95, f"{name} int8 vs fp32 cosine min {qcos.min():.4f} (> 0.95)")
            qalone = np.concatenate([run_encoder(sq, tok, [t], "mean") for t in TEXTS])
            qpad = float(np.abs(qemb - qalone).max())
            print(f"  info: int8 batch vs one-by-one max diff {qpad:.2e} "
                  "(dynamic activation quantisation sees padding)")
            ref["tiny-bert-int8"] = {
                "note": "int8 kernels may differ across CPUs/ORT builds; compare with tolerance 1e-2 "
                        "or only check cosine to fp32 > 0.95",
                "ir_version": mq.ir_version,
                "opsets": {o.domain or "ai.onnx": o.version for o in mq.opset_import},
                "cosine_to_fp32": {t: round(float(c), 6) for t, c in zip(TEXTS, qcos)},
                "embeddings": {t: rnd(qemb[i]) for i, t in enumerate(TEXTS)},
            }

    print("== cross-encoder")
    p = os.path.join(out, "tiny-cross-encoder", "onnx", "model.onnx")
    s = sess(p)
    check([i.name for i in s.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]
          and [o.name for o in s.get_outputs()] == ["logits"], "cross-encoder io names")
    ctok = load_tokenizer(tok_paths["tiny-cross-encoder"])
    lg = run_ce(s, ctok, CE_PAIRS)
    lg_alone = np.array([run_ce(s, ctok, [pr])[0] for pr in CE_PAIRS])
    check(np.abs(lg - lg_alone).max() < 1e-5, f"cross-encoder batch == one-by-one "
          f"(max diff {np.abs(lg - lg_alone).max():.2e})")
    a, b = run_ce(s, ctok, [("parse json config", "def parse_json_config(file)"),
                            ("parse json config", "compute distance between points")])
    check(a > b, f"'parse json config': parse_json_config doc {a:.4f} > distance doc {b:.4f}")
    check(lg[0] > lg[1] and lg[0] > lg[2] and lg[4] > lg[3] and lg[4] > lg[5],
          "cross-encoder ranks the matching document first for both queries")
    ref["tiny-cross-encoder"] = {
        "max_length": 512,
        "padding": "longest",
        "pairs": [{"query": q, "document": d, "logit": round(float(l), 6),
                   "token_ids": ctok.encode(q, d).ids, "type_ids": ctok.encode(q, d).type_ids}
                  for (q, d), l in zip(CE_PAIRS, lg)],
    }

    print("== static models")
    for name, dt in (("tiny-static", "F16"), ("tiny-static-f32", "F32")):
        p = os.path.join(out, name, "model.safetensors")
        t = load_file(p)
        check(list(t) == ["embeddings"] and t["embeddings"].shape == (V, STATIC_DIM)
              and t["embeddings"].dtype == {"F16": np.float16, "F32": np.float32}[dt],
              f"{name}: safetensors loads, embeddings {dt} {t['embeddings'].shape}")
        stok = load_tokenizer(tok_paths[name])
        emb, ids = static_encode(stok, t["embeddings"], TEXTS)
        cos = emb @ emb.T
        check(cos[0, 2] > cos[0, 3] and cos[1, 3] > cos[1, 2],
              f"{name}: queries closest to their matching documents")
        ref[name] = {
            "dtype": dt,
            "add_special_tokens": False,
            "drop_unk_id": UNK_ID,
            "normalized": True,
            "embeddings": {t_: rnd(emb[i]) for i, t_ in enumerate(TEXTS)},
            "cosine": [rnd(r) for r in cos],
        }
        if name == "tiny-static":
            for t_, i_ in zip(TEXTS, ids):
                ref["static_token_ids"][t_] = i_
    d16 = np.abs(np.array([ref["tiny-static"]["embeddings"][t] for t in TEXTS]) -
                 np.array([ref["tiny-static-f32"]["embeddings"][t] for t in TEXTS])).max()
    print(f"  info: f16 vs f32 static embeddings max abs diff {d16:.2e}")
    return ref


def run_encoder_ids(s, tok, text, pooling):
    encs = tok.encode_batch([text])
    ids = np.array([encs[0].ids], dtype=np.int64)
    mask = np.array([encs[0].attention_mask], dtype=np.int64)
    tt = np.array([encs[0].type_ids], dtype=np.int64)
    h = s.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})[0]
    if pooling == "mean":
        pooled = h[0].mean(0).astype(np.float64)
    else:
        pooled = h[0, 0].astype(np.float64)
    return l2n(pooled)


# ---------------------------------------------------------------------------
# README
# ---------------------------------------------------------------------------
def fmt(v, n=4):
    return ", ".join(f"{x:+.4f}" for x in v[:n])


def write_readme(out, ref):
    sizes = []
    for root, _, files in sorted(os.walk(out)):
        for f in sorted(files):
            p = os.path.join(root, f)
            rel = os.path.relpath(p, out).replace(os.sep, "/")
            if rel in ("README.md",):
                continue
            sizes.append((rel, os.path.getsize(p)))
    L = []
    L.append("# Test fixture models\n")
    L.append("Tiny, deterministic models for the Rust tests (ONNX Runtime via `ort`, HF `tokenizers`, "
             "`safetensors`). They are random little networks with a bit of built-in topic structure, "
             "**not** real models: only use them to test loading, tokenisation, batching, padding, "
             "pooling, normalisation and ranking plumbing.\n")
    L.append("Regenerate (only PyPI needed):\n")
    L.append("```sh\npython3 -m venv /tmp/fixvenv\n"
             "/tmp/fixvenv/bin/pip install onnx numpy onnxruntime tokenizers safetensors\n"
             "/tmp/fixvenv/bin/python scripts/make_test_models.py tests/fixtures/models\n```\n")
    L.append("The script builds every model, verifies it with onnxruntime and tokenizers, and writes "
             "this README and `reference.json`. Built with onnx 1.23.2, onnxruntime 1.32.0, "
             "numpy 2.4.6, tokenizers 0.23.3.\n")
    L.append("## Models\n")
    L.append("| dir | what | files |\n|---|---|---|")
    L.append("| `tiny-bert/` | sentence-transformers layout, 1-layer 1-head BERT-like encoder, hidden 32, "
             "**mean pooling**; `onnx/model.onnx` fp32 and `onnx/model_int8.onnx` (onnxruntime "
             "`quantize_dynamic`, QInt8, per-channel) | `onnx/model.onnx`, `onnx/model_int8.onnx`, "
             "`tokenizer.json`, `config.json`, `1_Pooling/config.json`, `sentence_bert_config.json` "
             "(max_seq_length 64), `modules.json` |")
    L.append("| `tiny-bge-cls/` | same architecture, different weights (seed), **CLS pooling** | same, no int8 |")
    L.append("| `tiny-cross-encoder/` | ms-marco-MiniLM-style cross-encoder; output `logits` [batch, 1]; "
             "logit = 1.5 * (weighted count of distinct token ids present in both segment A "
             "(type 0) and segment B (type 1)) + 0.5 * tiny neural term - 3 | `onnx/model.onnx`, "
             "`tokenizer.json`, `config.json` (BertForSequenceClassification, num_labels 1) |")
    L.append("| `tiny-static/` | model2vec static model: `model.safetensors` with one tensor `embeddings` "
             f"F16 [{V}, 16] | `model.safetensors`, `tokenizer.json`, `config.json` |")
    L.append("| `tiny-static-f32/` | same static model with F32 `embeddings` (unrounded values; the F16 "
             "one is these values rounded to half) | same |")
    L.append("")
    L.append("ONNX graphs: opset 17, ir_version 8 (the int8 model too; it uses only standard ops: "
             "DynamicQuantizeLinear, MatMulInteger, DequantizeLinear for the embedding table). "
             "Inputs `input_ids`, `attention_mask`, `token_type_ids`: int64 [batch, sequence], both "
             "axes dynamic. Encoder output `last_hidden_state` float32 [batch, sequence, 32]. "
             "Position embeddings exist for 128 positions, so never feed more than 128 tokens.\n")
    L.append("## Tokenizer conventions (all five tokenizer.json files share one vocabulary)\n")
    L.append(f"- WordPiece, vocab size {V}, `##` continuation prefix, BertNormalizer (lowercase, "
             "clean_text, handle_chinese_chars, strip_accents null -> accents stripped), BertPreTokenizer "
             "(splits on whitespace and punctuation, so `_`, `(`, `:` ... are separate tokens).")
    L.append(f"- Special ids: `[PAD]`={PAD_ID}, `[UNK]`={UNK_ID}, `[CLS]`={CLS_ID}, `[SEP]`={SEP_ID}, "
             f"`[MASK]`={MASK_ID}. **Not** BERT's 0/100/101/102/103: read ids from the tokenizer, "
             "never hard-code them.")
    L.append("- Every ASCII letter/digit exists as a word-start piece and as a `##` piece, so ASCII "
             "words never become `[UNK]`; characters outside the vocabulary (e.g. emoji, CJK) do.")
    L.append("- Transformer tokenizers (`tiny-bert`, `tiny-bge-cls`, `tiny-cross-encoder`) ship "
             '`"truncation": {"max_length": 16, "strategy": "LongestFirst"}` and '
             '`"padding": {"strategy": {"Fixed": 16}, "pad_id": 0}`, on purpose. The reference values '
             "below assume the Rust side replaces them (truncate at 64 for the encoders, 512 for the "
             "cross-encoder, pad to the longest sequence of the batch). Three reference texts are "
             "longer than 16 tokens, so leaving the shipped truncation on gives wrong numbers.")
    L.append("- Post-processor: TemplateProcessing, single `[CLS] $A [SEP]` (type 0), pair "
             "`[CLS] $A [SEP] $B:1 [SEP]:1`.")
    L.append("- Static tokenizers (`tiny-static*`) have no truncation/padding but **do** keep the same "
             "`[CLS]`/`[SEP]` post-processor (as real model2vec tokenizers do): encode with "
             "`add_special_tokens = false`.")
    L.append("")
    L.append("## How the reference values are computed\n")
    L.append("- Encoders: tokenize with special tokens, max length 64, pad to longest with `[PAD]`=0, "
             "attention_mask 1 for real tokens, token_type_ids 0. Run the model, pool "
             "(`tiny-bert`: mean of `last_hidden_state` over positions with attention_mask 1; "
             "`tiny-bge-cls`: row 0, the `[CLS]` position), then L2-normalise. The fp32 models are "
             "padding-invariant: a text alone or in a batch with longer texts gives the same vector "
             "(checked to 1e-5).")
    L.append("- Static: tokenize **without** special tokens, drop id 1 (`[UNK]`), mean of the embedding "
             "rows (f16 rows converted to f32), L2-normalise (config `normalize: true`). An empty id "
             "list would give a zero vector (none of the reference texts does).")
    L.append("- Cross-encoder: pair encoding `[CLS] query [SEP] doc [SEP]`, type ids 0 for the query "
             "part, 1 for the doc part, pad to longest; the raw logit (no sigmoid).")
    L.append("- Cosines are dot products of the normalised vectors. Tolerance: 1e-4 (fp32 and static); "
             "the int8 model only promises cosine > 0.95 against fp32.")
    L.append("")
    L.append("## Reference texts\n")
    L.append("| # | role | text | ids (with special tokens) |\n|---|---|---|---|")
    for i, t in enumerate(TEXTS):
        role = "query" if t in QUERIES else ("document" if t in DOCUMENTS else "extra ([UNK])")
        L.append(f"| {i} | {role} | `{t}` | {ref['token_ids_with_special_tokens'][t]} |")
    L.append("")
    for name in ("tiny-bert", "tiny-bge-cls", "tiny-static", "tiny-static-f32"):
        r = ref[name]
        title = {"tiny-bert": "tiny-bert fp32 (mean pooling)",
                 "tiny-bge-cls": "tiny-bge-cls (CLS pooling)",
                 "tiny-static": "tiny-static (F16)",
                 "tiny-static-f32": "tiny-static-f32 (F32)"}[name]
        L.append(f"### {title}\n")
        L.append("| # | first 4 dims of the normalised embedding |\n|---|---|")
        for i, t in enumerate(TEXTS):
            L.append(f"| {i} | {fmt(r['embeddings'][t])} |")
        L.append("")
        L.append("Pairwise cosines:\n")
        L.append("| | " + " | ".join(str(j) for j in range(len(TEXTS))) + " |")
        L.append("|---" * (len(TEXTS) + 1) + "|")
        for i, row in enumerate(r["cosine"]):
            L.append(f"| {i} | " + " | ".join(f"{x:.4f}" for x in row) + " |")
        L.append("")
    L.append("### tiny-bert int8 (cosine to fp32)\n")
    L.append("| # | cosine |\n|---|---|")
    for i, t in enumerate(TEXTS):
        L.append(f"| {i} | {ref['tiny-bert-int8']['cosine_to_fp32'][t]:.4f} |")
    L.append("")
    L.append("### tiny-cross-encoder logits\n")
    L.append("| query | document | logit |\n|---|---|---|")
    for pr in ref["tiny-cross-encoder"]["pairs"]:
        L.append(f"| `{pr['query']}` | `{pr['document']}` | {pr['logit']:.4f} |")
    L.append("")
    L.append("## Files\n")
    L.append("| file | bytes |\n|---|---|")
    for rel, sz in sizes:
        L.append(f"| `{rel}` | {sz} |")
    L.append("")
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", nargs="?", default=os.path.join("tests", "fixtures", "models"))
    args = ap.parse_args()
    out = args.out_dir
    for sub in ("tiny-bert", "tiny-bge-cls", "tiny-cross-encoder", "tiny-static", "tiny-static-f32"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(out, exist_ok=True)

    print(f"vocab size {V}; writing to {out}")
    write_sentence_model(out, "tiny-bert", SEEDS["tiny-bert"], "mean", with_int8=True, attn_scale=0.7)
    write_sentence_model(out, "tiny-bge-cls", SEEDS["tiny-bge-cls"], "cls", with_int8=False, attn_scale=ATTN_SCALE_CLS, q_scale=0.3, identity_mix=True)
    write_cross_encoder(out)
    write_static(out)

    try:
        ref = verify_and_reference(out)
    except CheckError as e:
        print(f"VERIFICATION FAILED: {e}", file=sys.stderr)
        return 1
    write_json(os.path.join(out, "reference.json"), ref, indent=1)
    write_readme(out, ref)

    total = 0
    for root, _, files in sorted(os.walk(out)):
        for f in sorted(files):
            p = os.path.join(root, f)
            total += os.path.getsize(p)
            h = hashlib.sha256(open(p, "rb").read()).hexdigest()[:12]
            print(f"{os.path.getsize(p):>9}  {h}  {os.path.relpath(p, out)}")
    print(f"{total:>9}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
