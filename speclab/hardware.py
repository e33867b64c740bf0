"""Hardware arithmetic for notebook 07: bytes, MACs, intensity, step time, the batch crossover.

Reference versions of what notebook 07 teaches, the loaders for the model configs in
data/models/ and the accelerator specs in data/accelerators.json, and the CPU timing
routine the notebook runs on the learner's own machine.

Conventions
  * A model config is a dict with the Hugging Face config.json field names
    (hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
    num_key_value_heads, optional head_dim, vocab_size, tie_word_embeddings).
  * One MAC (multiply-accumulate) is two FLOPs. Accelerators are rated in FLOP/s.
  * A forward pass over `n_tokens` new positions, each attending over `ctx` cached
    positions, reads every weight once (plus, at batch B, each sequence's KV cache).
  * An accelerator is a dict with "peak_flops" (dense bf16, FLOP/s) and "bandwidth" (bytes/s).
"""
import json
import math
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from .costs import expected_tokens

from .datafiles import DATA
MODELS = {"llama-2-7b": "Llama-2-7B", "llama-3-70b": "Llama-3-70B", "llama-3.2-1b": "Llama-3.2-1B"}

# The second seed's deployment: a 70B target and a 1B draft sharing four cards.
DEPLOYMENT = {"target": "llama-3-70b", "draft": "llama-3.2-1b", "accelerator": "H100", "cards": 4,
              "a": 0.8, "k": 4, "tokens": 48}


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


def load_measured(path):
    """(header comment lines, {column: np.array}) from a measured CSV with '#' comments, or None if absent."""
    path = Path(path)
    if not path.is_file():
        return None
    lines = path.read_text().splitlines()
    comments = [ln.lstrip("# ").rstrip() for ln in lines if ln.startswith("#")]
    rows = [ln for ln in lines if ln and not ln.startswith("#")]
    names = rows[0].split(",")
    values = np.array([[float(v) for v in r.split(",")] for r in rows[1:]])
    return comments, {n: values[:, i] for i, n in enumerate(names)}


# --- counting ------------------------------------------------------------------------


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def q_dim(cfg):
    """Width of the query (and attention output) projection: heads x head size."""
    return cfg["num_attention_heads"] * head_dim(cfg)


def kv_dim(cfg):
    """Width of the key and of the value projection: KV heads x head size (smaller under GQA)."""
    return cfg.get("num_key_value_heads", cfg["num_attention_heads"]) * head_dim(cfg)


def layer_params(cfg):
    """Weights in one decoder layer: attention q, k, v, o; SwiGLU gate, up, down; two RMSNorm vectors."""
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    attention = d * q_dim(cfg) + 2 * d * kv_dim(cfg) + q_dim(cfg) * d
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
    per_layer = (d * q_dim(cfg) + 2 * d * kv_dim(cfg) + q_dim(cfg) * d + 3 * d * f
                 + 2 * ctx * q_dim(cfg))
    return n_tokens * (cfg["num_hidden_layers"] * per_layer + d * cfg["vocab_size"])


def seed_macs(cfg, n_tokens, ctx):
    """The seed page's count: n_tokens * layers * (4 d^2 + 2 d ffn + 2 ctx d). Leaves out the third
    SwiGLU matrix and the LM head (and assumes full multi-head attention)."""
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    return n_tokens * cfg["num_hidden_layers"] * (4 * d * d + 2 * d * f + 2 * ctx * d)


def kv_cache_bytes(cfg, ctx, bytes_per_param=2):
    """Bytes of one sequence's KV cache at ctx positions: a key and a value vector per layer per position."""
    return 2 * cfg["num_hidden_layers"] * kv_dim(cfg) * ctx * bytes_per_param


def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    """Arithmetic intensity of one pass: MACs per byte of weights read."""
    return forward_macs(cfg, n_tokens, ctx) / weight_bytes(cfg, bytes_per_param)


def ridge_flops_per_byte(acc):
    """Intensity (FLOPs per byte) at which an accelerator's compute time equals its memory time."""
    return acc["peak_flops"] / acc["bandwidth"]


def ridge_macs_per_byte(acc):
    return ridge_flops_per_byte(acc) / 2


# --- time ----------------------------------------------------------------------------


def pass_bytes(cfg, n_tokens, ctx, batch=1, bytes_per_param=2):
    """Bytes one pass reads: the weights once, plus every sequence's KV cache."""
    return weight_bytes(cfg, bytes_per_param) + batch * kv_cache_bytes(cfg, ctx, bytes_per_param)


def step_time(cfg, acc, n_tokens, ctx, batch=1):
    """Seconds for one pass: n_tokens new positions for each of batch sequences with ctx cached each.

    max(bytes / bandwidth, FLOPs / peak): the weights are read once for the whole batch, each
    sequence's KV cache once, and FLOPs = 2 * batch * forward_macs(cfg, n_tokens, ctx).
    """
    memory = pass_bytes(cfg, n_tokens, ctx, batch) / acc["bandwidth"]
    compute = 2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]
    return max(memory, compute)


def crossover_batch(cfg, acc, n_tokens, ctx):
    """The batch size (a real number) at which a pass of n_tokens per sequence becomes compute-bound.

    Solves (W + B * KV) / bandwidth = 2 * B * MACs / peak for B, with W the weight bytes, KV one
    sequence's cache bytes at ctx and MACs = forward_macs(cfg, n_tokens, ctx). math.inf if the
    compute time per sequence never catches up with its cache-reading time.
    """
    w = weight_bytes(cfg) / acc["bandwidth"]
    per_seq = 2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"] - kv_cache_bytes(cfg, ctx) / acc["bandwidth"]
    return w / per_seq if per_seq > 0 else math.inf


def compute_bound_step_time(cfg, acc, n_tokens, ctx, batch=1):
    """BROKEN on purpose (notebook 07's break-it): a pass priced by its FLOPs alone, as if decoding
    were compute-bound, so its time grows in proportion to the tokens in it."""
    return 2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]


def round_times(target, draft, acc, k, ctx, batch=1, step=step_time):
    """(plain step, draft step, verify step) in seconds for one decoding round at this batch."""
    return step(target, acc, 1, ctx, batch), step(draft, acc, 1, ctx, batch), step(target, acc, k + 1, ctx, batch)


def speculative_speedup(target, draft, acc, a, k, ctx, batch=1, step=step_time):
    """Expected speedup of speculation: tokens per round x plain step / (k draft steps + one verify)."""
    plain, d, verify = round_times(target, draft, acc, k, ctx, batch, step)
    return expected_tokens(a, k) * plain / (k * d + verify)


def slower_batch(target, draft, acc, a, k, ctx, step=step_time, b_max=1 << 16):
    """The smallest whole batch size at which speculation is slower than plain decoding (None if none <= b_max)."""
    if speculative_speedup(target, draft, acc, a, k, ctx, b_max, step) >= 1:
        return None
    lo, hi = 0, b_max  # speedup(lo) >= 1 (or lo = 0), speedup(hi) < 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if speculative_speedup(target, draft, acc, a, k, ctx, mid, step) < 1:
            hi = mid
        else:
            lo = mid
    return hi


def emitted_per_round(a, k, n, seed=0):
    """Tokens emitted by each round until n are out, drawing acceptances independently with probability a.

    One uniform per drafted token from default_rng(seed); the last round is trimmed to reach exactly n.
    """
    rng, out = np.random.default_rng(seed), []
    while sum(out) < n:
        accepted = 0
        while accepted < k and rng.random() < a:
            accepted += 1
        out.append(min(accepted + 1, n - sum(out)))
    return out


# --- measuring this machine ----------------------------------------------------------


def time_matmul(rows=4096, cols=8192, columns=(1, 2, 4, 8, 16), repeats=5, progress=None, dtype=np.float32):
    """Time W @ X for a rows x cols weight matrix W and X with each number of token columns.

    A warm-up product first, then the median of `repeats` timed products per column count.
    progress(i, total, n, seconds) is called after each column count. Returns a dict with
    "columns", "seconds" (medians), "weight_bytes" and "flops" (per product, arrays).
    """
    rng = np.random.default_rng(0)
    w = rng.random((rows, cols), dtype=dtype)
    w @ rng.random((cols, 1), dtype=dtype)  # warm-up: page in W, start the BLAS threads
    seconds = []
    for i, n in enumerate(columns):
        x = rng.random((cols, n), dtype=dtype)
        w @ x  # warm-up for this shape
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            w @ x
            times.append(time.perf_counter() - t0)
        seconds.append(float(np.median(times)))
        if progress:
            progress(i + 1, len(columns), n, seconds[-1])
    columns = np.array(columns)
    return {"columns": columns, "seconds": np.array(seconds),
            "weight_bytes": w.nbytes, "flops": 2.0 * rows * cols * columns}


def fit_roofline(m):
    """(bandwidth bytes/s, peak FLOP/s) read off a time_matmul result.

    Bandwidth: the weight bytes over the one-column time (that product is all memory traffic).
    Peak: the best FLOP rate any column count reached (a lower bound on the true peak).
    """
    bandwidth = m["weight_bytes"] / m["seconds"][0]
    peak = float(np.max(m["flops"] / m["seconds"]))
    return bandwidth, peak
