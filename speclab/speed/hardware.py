"""Hardware arithmetic for notebook 07: bytes, MACs, step time, memory capacity, the batch limits.

Reference versions of what notebook 07 teaches, read top to bottom: the loaders for the model
configs in data/models/ and the accelerator specs in data/accelerators.json; counting (weights,
MACs, KV cache); time (a pass priced kernel by kernel on the roofline); memory capacity;
speculation on the roofline; and each deployment at its own best (07's break-it). One deployment over
every batch at once, priced by the learner's functions (07's demos and widget), is speclab.speed.serving;
timing the learner's own CPU is speclab.speed.roofline.

Conventions
  * A model config is a dict with the Hugging Face config.json field names
    (hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
    num_key_value_heads, optional head_dim, vocab_size, tie_word_embeddings).
  * One MAC (multiply-accumulate) is two FLOPs. Accelerators are rated in FLOP/s, and
    every intensity and ridge here is in FLOPs per byte (one unit, as on a roofline).
  * A forward pass over `n_tokens` new positions, each attending over `ctx` cached
    positions, reads every weight once (plus, at batch B, each sequence's KV cache).
  * A step is priced kernel by kernel, added: the weight matmuls on their roofline, attention
    over the cache on its own (step_time). Never one max over the whole pass.
  * An accelerator is a dict with "peak_flops" (dense bf16, FLOP/s), "bandwidth" (bytes/s)
    and "memory" (bytes).
  * A draft step costs its roofline time plus a fixed overhead (speclab.speed.costs.draft_cost,
    DRAFT_STEP_OVERHEAD_S: the same model notebook 06 uses).
"""
import json
import math
from functools import lru_cache

import numpy as np

from .costs import draft_cost, expected_tokens
from ..plumbing.datafiles import DATA

MODELS = {"llama-2-7b": "Llama-2-7B", "llama-3-70b": "Llama-3-70B", "llama-3.2-1b": "Llama-3.2-1B"}

# The hardware explainer's deployment: a 70B target and a 1B draft sharing four cards.
DEPLOYMENT = {"target": "llama-3-70b", "draft": "llama-3.2-1b", "accelerator": "H100", "cards": 4,
              "a": 0.8, "k": 4, "tokens": 48}
CONTEXTS = (512, 1024, 2048, 4096, 8192, 16384)   # the contexts 07's tables and widget offer


# --- loading -------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _model_text(key):
    return (DATA / "models" / f"{key}.json").read_text()


def load_model(key):
    """A fresh dict of the config in data/models/<key>.json ('llama-2-7b', 'llama-3-70b', 'llama-3.2-1b')."""
    if key not in MODELS:
        raise KeyError(f"no model {key!r}; the stored configs are {sorted(MODELS)}")
    return json.loads(_model_text(key))


@lru_cache(maxsize=None)
def _accelerator_text():
    return (DATA / "accelerators.json").read_text()


def load_accelerators():
    """{'A100': {...}, 'H100': {...}, 'H200': {...}} from data/accelerators.json (fresh dicts)."""
    doc = json.loads(_accelerator_text())
    return {k: v for k, v in doc.items() if not k.startswith("_")}


def accelerator(key, cards=1):
    """One accelerator's spec; with cards > 1, that many cards pooled (peak and bandwidth add up).

    Pooling ignores the cost of splitting the model across cards (the all-reduces of tensor
    parallelism): an optimistic, simple model.
    """
    spec = load_accelerators()[key]
    if cards != 1:
        spec = dict(spec, name=f"{cards} x {spec['name']}", peak_flops=cards * spec["peak_flops"],
                    bandwidth=cards * spec["bandwidth"], memory=cards * spec["memory"])
    return spec


# --- counting ------------------------------------------------------------------------


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def q_dim(cfg):
    """Width of the query (and attention output) projection: heads x head size."""
    return cfg["num_attention_heads"] * head_dim(cfg)


def kv_dim(cfg):
    """Width of the key and of the value projection: KV heads x head size (smaller under GQA)."""
    return cfg.get("num_key_value_heads", cfg["num_attention_heads"]) * head_dim(cfg)


def _widths(cfg):
    """(q_dim, kv_dim) from one read of cfg: notebook 07's sweeps price millions of passes."""
    heads = cfg["num_attention_heads"]
    size = cfg.get("head_dim") or cfg["hidden_size"] // heads
    return heads * size, cfg.get("num_key_value_heads", heads) * size


def layer_params(cfg):
    """Weights in one decoder layer: attention q, k, v, o; SwiGLU gate, up, down; two RMSNorm vectors."""
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    q, kv = _widths(cfg)
    attention = d * q + 2 * d * kv + q * d
    mlp = 3 * d * f
    return attention + mlp + 2 * d


def param_count(cfg):
    """Every weight: embeddings, the layers, the final norm, and the LM head unless it is tied."""
    d, v = cfg["hidden_size"], cfg["vocab_size"]
    embed = v * d
    head = 0 if cfg.get("tie_word_embeddings", False) else v * d
    return embed + cfg["num_hidden_layers"] * layer_params(cfg) + d + head


def weight_bytes(cfg, bytes_per_param=2):
    """Bytes needed to store every weight once (2 for fp16/bf16)."""
    return param_count(cfg) * bytes_per_param


def forward_macs(cfg, n_tokens, ctx):
    """MACs of one forward pass over n_tokens positions, each attending over ctx cached positions.

    Per position: per layer the q, k, v, o projections, the three SwiGLU matrices, and attention
    (q.k over ctx keys, then the weighted sum of ctx values: 2 * ctx * q_dim); then the LM head
    (hidden_size x vocab_size, whether or not it is tied to the embeddings). Looking up the
    embedding row costs no MACs.
    """
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    q, kv = _widths(cfg)
    per_layer = d * q + 2 * d * kv + q * d + 3 * d * f + 2 * ctx * q
    return n_tokens * (cfg["num_hidden_layers"] * per_layer + d * cfg["vocab_size"])


def seed_macs(cfg, n_tokens, ctx):
    """The NumPy walk-through's count: n_tokens * layers * (4 d^2 + 2 d ffn + 2 ctx d). Leaves out the third
    SwiGLU matrix and the LM head (and assumes full multi-head attention)."""
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    return n_tokens * cfg["num_hidden_layers"] * (4 * d * d + 2 * d * f + 2 * ctx * d)


def kv_cache_bytes(cfg, ctx, bytes_per_param=2):
    """Bytes of one sequence's KV cache at ctx positions: a key and a value vector per layer per position."""
    return 2 * cfg["num_hidden_layers"] * kv_dim(cfg) * ctx * bytes_per_param


def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    """Arithmetic intensity of one pass: FLOPs (2 per MAC) per byte of weights read."""
    return 2 * forward_macs(cfg, n_tokens, ctx) / weight_bytes(cfg, bytes_per_param)


def ridge_flops_per_byte(acc):
    """Intensity (FLOPs per byte) at which an accelerator's compute time equals its memory time."""
    return acc["peak_flops"] / acc["bandwidth"]


# --- time ----------------------------------------------------------------------------


def pass_bytes(cfg, n_tokens, ctx, batch=1, bytes_per_param=2):
    """Bytes one pass reads: the weights once, plus every sequence's KV cache."""
    return weight_bytes(cfg, bytes_per_param) + batch * kv_cache_bytes(cfg, ctx, bytes_per_param)


def attention_macs(cfg, n_tokens, ctx):
    """MACs of attention itself (scores against ctx keys, weighted sum of ctx values) for n_tokens positions:
    forward_macs(cfg, n_tokens, ctx) - forward_macs(cfg, n_tokens, 0)."""
    return n_tokens * cfg["num_hidden_layers"] * 2 * ctx * q_dim(cfg)


def matmul_time(cfg, acc, n_tokens, batch=1):
    """Seconds of the weight matmuls of one pass, on their own roofline: every weight read once for the
    whole batch, 2 * batch * forward_macs(cfg, n_tokens, 0) FLOPs (projections, MLP, LM head)."""
    return max(weight_bytes(cfg) / acc["bandwidth"],
               2 * batch * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"])


def attention_time(cfg, acc, n_tokens, ctx, batch=1):
    """Seconds of attention over the KV cache, on its own roofline: each of `batch` sequences reads its own
    cache, kv_cache_bytes(cfg, ctx), and does 2 * attention_macs(cfg, n_tokens, ctx) FLOPs."""
    return max(batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"],
               2 * batch * attention_macs(cfg, n_tokens, ctx) / acc["peak_flops"])


def kernel_times(cfg, acc, n_tokens, ctx, batch=1):
    """(weight matmuls, attention) in seconds: the two kinds of kernel a pass runs, one after the other."""
    return matmul_time(cfg, acc, n_tokens, batch), attention_time(cfg, acc, n_tokens, ctx, batch)


def step_time(cfg, acc, n_tokens, ctx, batch=1):
    """Seconds for one pass: n_tokens new positions for each of batch sequences with ctx cached each.

    Priced kernel by kernel, added: the weight matmuls on their roofline (the weights read once for
    the whole batch, 2 * batch * forward_macs(cfg, n_tokens, 0) FLOPs) plus attention on its own
    (each sequence's KV cache read once, 2 * batch * attention_macs FLOPs). The two run one after
    the other, so neither hides the other's time: never one max over the whole pass.
    """
    return matmul_time(cfg, acc, n_tokens, batch) + attention_time(cfg, acc, n_tokens, ctx, batch)


def one_max_step_time(cfg, acc, n_tokens, ctx, batch=1):
    """The price notebook 07 used to teach, kept to show what it gets wrong: one max over the whole pass,
    max((W + B * KV) / bandwidth, 2 * B * forward_macs(cfg, n_tokens, ctx) / peak), which lets the
    cache's reads hide the matmuls' arithmetic."""
    memory = pass_bytes(cfg, n_tokens, ctx, batch) / acc["bandwidth"]
    compute = 2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]
    return max(memory, compute)


def step_times(cfg, acc, n_tokens, ctx, batches):
    """step_time over an array of batch sizes at once (the widget's curve)."""
    b = np.asarray(batches, dtype=float)
    matmuls = np.maximum(weight_bytes(cfg) / acc["bandwidth"],
                         2 * b * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"])
    attention = b * max(kv_cache_bytes(cfg, ctx) / acc["bandwidth"],
                        2 * attention_macs(cfg, n_tokens, ctx) / acc["peak_flops"])
    return matmuls + attention


def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    """BROKEN on purpose (notebook 07's break-it): the hardware explainer's price of a pass.

    It leaves the KV cache out entirely, both the bytes of reading it and the attention
    arithmetic over it, so `ctx` is ignored: the weight matmuls alone, which is the honest step
    time of an empty context.
    """
    return matmul_time(cfg, acc, n_tokens, batch)


def crossover_batch(cfg, acc, n_tokens, weights=weight_bytes, macs=forward_macs):
    """The batch size (a real number) at which the weight matmuls of a pass of n_tokens per sequence
    become compute-bound: W / bandwidth = 2 * B * macs(cfg, n_tokens, 0) / peak, with W = weights(cfg).

    The context does not enter: the cache is read by the attention kernel, not by the matmuls.
    math.inf for a pass with no arithmetic (n_tokens = 0).
    """
    per_seq = 2 * macs(cfg, n_tokens, 0) / acc["peak_flops"]
    return weights(cfg) / acc["bandwidth"] / per_seq if per_seq > 0 else math.inf


def attention_crossover_tokens(cfg, acc):
    """Positions per sequence at which attention turns compute-bound (its FLOPs per byte of cache reach the
    ridge): the ridge over the FLOPs per cache byte of one position. Independent of batch and context."""
    per_token = 2 * attention_macs(cfg, 1, 1) / kv_cache_bytes(cfg, 1)
    return ridge_flops_per_byte(acc) / per_token


# --- memory capacity -------------------------------------------------------------------


def deployment_bytes(target, draft, batch, ctx, weights=weight_bytes):
    """Bytes a speculative deployment holds: both models' weights (counted by `weights`), and for each of
    `batch` sequences both models' KV caches at ctx positions (activations and fragmentation ignored)."""
    return (weights(target) + weights(draft)
            + batch * (kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx)))


def max_batch(target, draft, acc, ctx, weights=weight_bytes):
    """The largest batch whose weights (counted by `weights`) and caches fit in acc["memory"] (math.inf
    with no cache, 0 if the weights alone do not fit)."""
    free = acc["memory"] - weights(target) - weights(draft)
    per_seq = kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx)
    if free < 0:
        return 0
    return math.inf if per_seq == 0 else int(free // per_seq)


# --- speculation on the roofline ---------------------------------------------------------


def round_times(target, draft, acc, k, ctx, batch=1, step=step_time, overhead=0.0):
    """(plain step, draft step, verify pass) in seconds for one decoding round at this batch.

    The draft step is its roofline time plus `overhead` seconds (0: the ideal draft;
    costs.DRAFT_STEP_OVERHEAD_S: the course's realistic one).
    """
    return (step(target, acc, 1, ctx, batch), step(draft, acc, 1, ctx, batch) + overhead,
            step(target, acc, k + 1, ctx, batch))


def speculative_speedup(target, draft, acc, a, k, ctx, batch=1, step=step_time, overhead=0.0):
    """Expected speedup of speculation: tokens per round / (k c + verify / plain), with the draft
    cost c = costs.draft_cost(draft step, plain step, overhead), the model notebook 06 uses."""
    plain, verify = step(target, acc, 1, ctx, batch), step(target, acc, k + 1, ctx, batch)
    c = draft_cost(step(draft, acc, 1, ctx, batch), plain, overhead)
    return expected_tokens(a, k) / (k * c + verify / plain)


def slower_batch(step, target, draft, acc, a, k, ctx, overhead):
    """Notebook 07's break-it measure: the smallest batch that fits in memory at which a speculative
    round takes longer than plain decoding of the tokens it yields; None if none that fits does.

    Each pass is priced by `step(cfg, acc, n_tokens, ctx, batch)`; a draft step costs
    step(draft, acc, 1, ctx, batch) + overhead; a round of k drafts and one verify pass over
    k + 1 positions yields expected_tokens(a, k) tokens; a batch fits when
    deployment_bytes(target, draft, batch, ctx) <= acc["memory"].
    """
    tokens, b = expected_tokens(a, k), 1
    while deployment_bytes(target, draft, b, ctx) <= acc["memory"]:
        plain, d, verify = round_times(target, draft, acc, k, ctx, b, step, overhead)
        if tokens * plain < k * d + verify:
            return b
        b += 1
    return None


# --- each deployment at its own best (07's break-it) --------------------------------------


def plain_max_batch(target, acc, ctx):
    """The largest batch plain decoding fits in acc["memory"]: the target's weights and, per sequence,
    the target's KV cache only (it holds no draft), so more sequences fit than speculation holds."""
    free = acc["memory"] - weight_bytes(target)
    per_seq = kv_cache_bytes(target, ctx)
    if free < 0:
        return 0
    return math.inf if per_seq == 0 else int(free // per_seq)


def best_gain(step, target, draft, acc, a, k, ctx, overhead):
    """Notebook 07's break-it measure: tokens per second of the best speculative deployment over
    those of the best plain one, each at the batch (among those that fit its own memory) that
    serves it best.

    Plain decoding at batch B yields B tokens per step(target, acc, 1, ctx, B); a speculative round
    at batch B yields B * expected_tokens(a, k) tokens in k draft steps, step(draft, acc, 1, ctx, B)
    + overhead each, and one verify pass step(target, acc, k + 1, ctx, B). Plain fits
    plain_max_batch sequences, speculation max_batch (both models, both caches).
    """
    tokens = expected_tokens(a, k)
    plain = max(b / step(target, acc, 1, ctx, b) for b in range(1, plain_max_batch(target, acc, ctx) + 1))
    spec = max(b * tokens / (k * (step(draft, acc, 1, ctx, b) + overhead) + step(target, acc, k + 1, ctx, b))
               for b in range(1, max_batch(target, draft, acc, ctx) + 1))
    return spec / plain


FLIP_CONTEXTS = (256, 16384)   # the contexts flip_context searches, inclusive


def flip_context(step, target, draft, acc, a, k, overhead, lo=FLIP_CONTEXTS[0], hi=FLIP_CONTEXTS[1]):
    """Notebook 07's break-it diagnosis: the shortest context in lo..hi at which the best speculative
    deployment serves strictly more tokens per second than the best plain one (best_gain > 1); None
    if it does at none. Bisection: it assumes the gain crosses 1 once, from below, as the context
    grows (true of every deployment 07's tests pass; checked there by a full scan)."""
    def wins(ctx):
        return best_gain(step, target, draft, acc, a, k, ctx, overhead) > 1
    if not wins(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if wins(mid) else (mid + 1, hi)
    return lo
