"""Hardware arithmetic for notebook 07: bytes, MACs, step time, memory capacity, the batch limits.

Reference versions of what notebook 07 teaches, the loaders for the model configs in
data/models/ and the accelerator specs in data/accelerators.json, the deployment widget's
figure, and the CPU timing routine the notebook runs on the learner's own machine.

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
  * A draft step costs its roofline time plus a fixed overhead (speclab.costs.draft_cost,
    DRAFT_STEP_OVERHEAD_S: the same model notebook 06 uses).
"""
import json
import math
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

from .costs import DRAFT_STEP_OVERHEAD_S, draft_cost, expected_tokens

from .datafiles import DATA
MODELS = {"llama-2-7b": "Llama-2-7B", "llama-3-70b": "Llama-3-70B", "llama-3.2-1b": "Llama-3.2-1B"}

# The hardware explainer's deployment: a 70B target and a 1B draft sharing four cards.
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


def crossover_batch(cfg, acc, n_tokens):
    """The batch size (a real number) at which the weight matmuls of a pass of n_tokens per sequence
    become compute-bound: W / bandwidth = 2 * B * forward_macs(cfg, n_tokens, 0) / peak.

    The context does not enter: the cache is read by the attention kernel, not by the matmuls.
    math.inf for a pass with no arithmetic (n_tokens = 0).
    """
    per_seq = 2 * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"]
    return weight_bytes(cfg) / acc["bandwidth"] / per_seq if per_seq > 0 else math.inf


def attention_crossover_tokens(cfg, acc):
    """Positions per sequence at which attention turns compute-bound (its FLOPs per byte of cache reach the
    ridge): the ridge over the FLOPs per cache byte of one position. Independent of batch and context."""
    per_token = 2 * attention_macs(cfg, 1, 1) / kv_cache_bytes(cfg, 1)
    return ridge_flops_per_byte(acc) / per_token


# --- memory capacity -------------------------------------------------------------------


def deployment_bytes(target, draft, batch, ctx):
    """Bytes a speculative deployment holds: both models' weights, and for each of `batch`
    sequences both models' KV caches at ctx positions (activations and fragmentation ignored)."""
    return (weight_bytes(target) + weight_bytes(draft)
            + batch * (kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx)))


def max_batch(target, draft, acc, ctx):
    """The largest batch whose weights and caches fit in acc["memory"] (math.inf with no cache, 0 if
    the weights alone do not fit)."""
    free = acc["memory"] - weight_bytes(target) - weight_bytes(draft)
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


# --- the deployment widget ---------------------------------------------------------------

CONTEXTS = (512, 1024, 2048, 4096, 8192, 16384)
_BATCHES = np.arange(1, 4097)                                   # every whole batch the widget considers
_CURVE = np.unique(np.geomspace(1, 4096, 160).astype(int)) - 1  # indices of the batches it draws


def deployment(accelerator="H100", context=1024, batch=1, k=4, a=0.8, overhead_ms=1e3 * DRAFT_STEP_OVERHEAD_S,
               cards=4, models=("llama-3-70b", "llama-3.2-1b")):
    """Everything the deployment widget shows, as numbers: one pass of numpy over batches 1..4096.

    Returns a dict: step times in ms at `batch` ("plain_ms", "draft_bytes_ms", "draft_ms" with the
    overhead, "verify_ms"), "speedup" with the realistic draft and "ideal_speedup" with the ideal one
    (None where the batch does not fit), "fits", "max_batch", "memory_gb" (what this batch needs),
    "capacity_gb", "slower_batch" (the smallest batch that fits and is slower than plain decoding,
    else None), "tokens_per_round", and the curves over "batches": "speedup_curve", "ideal_curve".
    """
    target, draft = load_model(models[0]), load_model(models[1])
    acc = globals()["accelerator"](accelerator, cards=cards)
    overhead = overhead_ms * 1e-3
    tokens = expected_tokens(a, k)
    plain = step_times(target, acc, 1, context, _BATCHES)
    d_bytes = step_times(draft, acc, 1, context, _BATCHES)
    verify = step_times(target, acc, k + 1, context, _BATCHES)
    speed = tokens / (k * draft_cost(d_bytes, plain, overhead) + verify / plain)
    ideal = tokens / (k * draft_cost(d_bytes, plain, 0.0) + verify / plain)
    cap = max_batch(target, draft, acc, context)
    fits = batch <= cap
    slow = np.flatnonzero((tokens * plain < k * (d_bytes + overhead) + verify) & (_BATCHES <= cap))
    i = batch - 1
    return {"plain_ms": float(1e3 * plain[i]), "draft_bytes_ms": float(1e3 * d_bytes[i]),
            "draft_ms": float(1e3 * (d_bytes[i] + overhead)), "overhead_ms": float(overhead_ms),
            "verify_ms": float(1e3 * verify[i]), "tokens_per_round": float(tokens),
            "speedup": float(speed[i]) if fits else None, "ideal_speedup": float(ideal[i]) if fits else None,
            "fits": bool(fits), "max_batch": cap, "slower_batch": int(_BATCHES[slow[0]]) if len(slow) else None,
            "memory_gb": deployment_bytes(target, draft, batch, context) / 1e9, "capacity_gb": acc["memory"] / 1e9,
            "weights_gb": (weight_bytes(target) + weight_bytes(draft)) / 1e9, "accelerator": acc["name"],
            "batches": _BATCHES, "speedup_curve": speed, "ideal_curve": ideal}


def build_deployment(fig):
    """The deployment widget's figure without its numbers: what no control changes, drawn once.

    Returns the parts update_deployment changes (marked as moving, for speclab.widgets.live).
    """
    from matplotlib import rcParams
    from matplotlib.ticker import MaxNLocator, NullLocator

    from .style import COLORS
    from .widgets import moving
    # Fixed margins and no layout engine: with any engine (even "none") savefig lays the figure
    # out in a first, unrendered draw before the real one; these margins fit the labels.
    fig.set_layout_engine(None)
    ax1, ax2 = fig.subplots(1, 2, width_ratios=[1, 1.8], gridspec_kw=dict(
        left=0.075, right=0.985, bottom=0.2, top=0.9, wspace=0.22))
    n = len(_BATCHES)
    # Left, when the batch fits: one round's step times. When it does not: its memory bill.
    steps = ax1.bar([0, 1, 1, 2], [0, 0, 0, 0], bottom=[0, 0, 0, 0], hatch=["", "", "//", ""], edgecolor="white",
                    linewidth=0, color=[COLORS["plain"], COLORS["draft"], COLORS["draft"], COLORS["target"]])
    bill = ax1.bar([0, 0], [0, 0], bottom=[0, 0], color=[COLORS["plain"], COLORS["rejected"]], width=0.5)
    capacity = ax1.axhline(1, color="black", lw=1.5)
    # labels that change with a control are texts where the tick labels go, not tick labels (those are kept)
    under = ax1.get_xaxis_text1_transform(rcParams["xtick.major.pad"] + rcParams["xtick.major.size"])[0]
    tick_label = ax1.text(1, 0, " ", transform=under, ha="center", va="top", fontsize=rcParams["xtick.labelsize"])
    memory_label = ax1.text(0.3, 0, "memory", va="bottom", fontsize=8)
    weights_label = ax1.text(0, 0, "weights", ha="center", va="center", color="white", fontsize=8)
    kv_label = ax1.text(0, 0, "KV caches", ha="center", va="center", color="white", fontsize=8)
    title1 = ax1.set_title(" ", y=1.0)
    # Few ticks, no vertical grid under the bars: tick labels and grid lines are most of the drawing.
    ax1.yaxis.set_major_locator(MaxNLocator(4))
    ax1.grid(axis="x", visible=False)
    # Right: the speedup over every batch that fits; the axes hold still (batches 1..4096 on a log scale)
    ideal, = ax2.plot([1], [1], color=COLORS["target"], lw=1, ls="--")
    real, = ax2.plot([1], [1], color=COLORS["target"], lw=2)
    # Labels beside the curves' flat start instead of a legend (a legend was a fifth of a redraw).
    ideal_label = ax2.text(1.15, 0, "ideal draft (bytes only)", fontsize=8, va="bottom", color=COLORS["target"])
    real_label = ax2.text(1.15, 0, " ", fontsize=8, color=COLORS["target"])
    ax2.axhline(1, color=COLORS["floor"], ls=":", lw=1)
    full = ax2.axvspan(1, n, color=COLORS["floor"], alpha=0.25, lw=0)
    full_label = ax2.text(n * 0.9, 0.15, " ", ha="right", fontsize=8)
    dot, = ax2.plot([1], [1], "o", color=COLORS["rejected"])
    too_big = ax2.axvline(1, color=COLORS["rejected"], lw=1.5)
    title2 = ax2.set_title(" ", y=1.0)
    ax2.set(xscale="log", xlim=(0.8, n), xlabel="batch size (sequences)", ylabel="speedup")
    # Plain decade labels and fixed title positions: a log axis' default labels are mathtext ($10^2$),
    # parsed again at every redraw, and an automatic title position measures every tick label.
    ax2.set_xticks([1, 10, 100, 1000], ["1", "10", "100", "1000"])
    ax2.xaxis.set_minor_locator(NullLocator())
    ax2.yaxis.set_major_locator(MaxNLocator(5, integer=True))
    parts = moving(*steps, *bill, capacity, tick_label, memory_label, weights_label, kv_label, title1,
                   ideal, real, ideal_label, real_label, full, full_label, dot, too_big, title2)
    return {"axes": (ax1, ax2), "steps": tuple(steps), "bill": tuple(bill), "capacity": capacity,
            "tick_label": tick_label, "bill_labels": (memory_label, weights_label, kv_label), "title1": title1,
            "ideal": ideal, "real": real, "ideal_label": ideal_label, "real_label": real_label, "full": full,
            "full_label": full_label, "dot": dot, "too_big": too_big, "title2": title2, "all": parts, "mode": None}


def update_deployment(parts, batch=1, accelerator="H100", context=1024, k=4, a=0.8, overhead_ms=0.8):
    """Set build_deployment's parts to one setting: one round's step times at this batch (or, if the
    batch does not fit, its memory bill), and the speedup over every batch that fits in memory.

    Returns deployment(...) without its curves: the numbers tests read as widget.result.
    """
    from .style import COLORS, steady_ylim
    r = deployment(accelerator, context, batch, k, a, overhead_ms)
    # a new left axis covers every accelerator, so picking another one moves the bars, not the axis
    every = [r] + [deployment(other, context, batch, k, a, overhead_ms) for other in load_accelerators()
                   if other != accelerator]
    cap, n = r["max_batch"], len(r["batches"])
    ax1, ax2 = parts["axes"]
    fits = r["fits"]
    if parts["mode"] != fits:   # the left panel's frame changes with the mode: new limits redraw it
        parts["mode"] = fits
        if fits:
            ax1.set_xticks([0, 1, 2], ["plain\nstep", "", "verify\npass"])
            ax1.set(xlim=(-0.6, 2.6), ylabel="ms")
        else:
            ax1.set_xticks([0], [""])
            ax1.set(xlim=(-0.8, 0.8), ylabel="GB")
        ax1.set_ylim(0, 1e-9)   # the new panel's scale is chosen below
    for bar in parts["steps"]:
        bar.set_visible(fits)
    for artist in (*parts["bill"], parts["capacity"], *parts["bill_labels"]):
        artist.set_visible(not fits)
    if fits:
        drafting = k * r["draft_bytes_ms"]
        for bar, height, bottom in zip(parts["steps"], [r["plain_ms"], drafting, k * overhead_ms, r["verify_ms"]],
                                       [0, 0, drafting, 0]):
            bar.set_height(height)
            bar.set_y(bottom)
        parts["tick_label"].set_text(f"{k} draft steps\n(// overhead)")
        parts["tick_label"].set_x(1)
        parts["title1"].set_text(f"One round at batch {batch}")
        steady_ylim(ax1, 0.0, max(r["plain_ms"], k * r["draft_ms"], r["verify_ms"]), floor=0.0,
                    cover=max(max(e["plain_ms"], k * e["draft_ms"], e["verify_ms"]) for e in every))
    else:
        used = [r["weights_gb"], r["memory_gb"] - r["weights_gb"]]
        weights, caches = parts["bill"]
        weights.set_height(used[0])
        caches.set_height(used[1])
        caches.set_y(used[0])
        parts["capacity"].set_ydata([r["capacity_gb"]] * 2)
        memory_label, weights_label, kv_label = parts["bill_labels"]
        memory_label.set_y(r["capacity_gb"])
        weights_label.set_y(used[0] / 2)
        kv_label.set_y(used[0] + used[1] / 2)
        parts["tick_label"].set_text(f"batch {batch}")
        parts["tick_label"].set_x(0)
        parts["title1"].set_text(f"Needs {r['memory_gb']:.0f} GB of {r['capacity_gb']:.0f}")
        steady_ylim(ax1, 0.0, max(r["memory_gb"], r["capacity_gb"]), floor=0.0,
                    cover=max(max(e["memory_gb"], e["capacity_gb"]) for e in every))
    shown = _CURVE[_CURVE < min(cap, n)]
    xs = r["batches"][shown]
    parts["ideal"].set_data(xs, r["ideal_curve"][shown])
    parts["real"].set_data(xs, r["speedup_curve"][shown])
    top, low = float(r["ideal_curve"][0]), float(r["speedup_curve"][0])
    # the right panel's axis holds still while the curves fit it (a new axis redraws the whole frame)
    steady_ylim(ax2, 0.0, max(3.2, top), floor=0.0)
    parts["ideal_label"].set_y(top + 0.06)
    close = top - low < 0.3
    parts["real_label"].set_text(f"draft + {overhead_ms:.1f} ms per step")
    parts["real_label"].set_y(low - 0.08 if close else low + 0.06)
    parts["real_label"].set_va("top" if close else "bottom")
    parts["full"].set_visible(cap < n)
    parts["full_label"].set_visible(cap < n)
    if cap < n:
        parts["full"].set_x(max(cap, 1))
        parts["full"].set_width(n - max(cap, 1))
        parts["full_label"].set_text(f"more than {cap}\ndo not fit")
    slow = r["slower_batch"]
    ending = f"slower from batch {slow}" if slow else "never slower while it fits"
    parts["dot"].set_visible(fits)
    parts["too_big"].set_visible(not fits)
    if fits:
        parts["dot"].set_data([batch], [r["speedup"]])
        parts["title2"].set_text(f"{r['speedup']:.2f}x at batch {batch}; {ending}")
        parts["title2"].set_color("black")
    else:
        parts["too_big"].set_xdata([batch, batch])
        parts["title2"].set_text(f"Batch {batch} does not fit: at most {cap} sequences")
        parts["title2"].set_color(COLORS["rejected"])
    return {key: v for key, v in r.items() if key not in ("batches", "speedup_curve", "ideal_curve")}


def draw_deployment(fig, batch=1, accelerator="H100", context=1024, k=4, a=0.8, overhead_ms=0.8):
    """The deployment widget's figure, drawn whole on `fig` (build_deployment, then update_deployment)."""
    return update_deployment(build_deployment(fig), batch, accelerator, context, k, a, overhead_ms)


# --- measuring this machine ----------------------------------------------------------

MATMUL_COLUMNS = (1, 2, 4, 8, 16, 32, 64)


def blas_library():
    """The BLAS library NumPy calls, as threadpoolctl reports it ("openblas 0.3.31, Haswell kernels")."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl is not installed)"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        return "unknown"
    info = blas[0]
    arch = f", {info['architecture']} kernels" if info.get("architecture") else ""
    return f"{info.get('internal_api', '?')} {info.get('version') or ''}{arch}".replace("  ", " ")


@contextmanager
def blas_threads(n):
    """Run the block with the BLAS library limited to n threads (threadpoolctl); yields the count
    actually fixed, or None if threadpoolctl is not installed (then nothing is fixed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield None
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield n


def time_matmul(rows=4096, cols=8192, columns=MATMUL_COLUMNS, sweeps=3, threads=1, progress=None,
                dtype=np.float32):
    """Time W @ X for a rows x cols weight matrix W and X with each number of token columns.

    The BLAS library runs on `threads` threads (fixed, so a busy machine changes less). After one
    warm-up product of every shape, `sweeps` sweeps each time every column count once, in
    alternating order (forward, then backward, ...), so a burst of load elsewhere hits every
    shape alike. progress(sweep, sweeps, seconds of that sweep's products) is called after each
    sweep. Returns a dict: "columns", "samples" (sweeps x columns, seconds), "seconds" (the fastest
    sample of each column count: the machine's rate with the least interference), "spread" (slowest
    over fastest sample, per column count), "weight_bytes", "flops" (per product) and "threads".
    """
    rng = np.random.default_rng(0)
    w = rng.random((rows, cols), dtype=dtype)
    xs = [rng.random((cols, n), dtype=dtype) for n in columns]
    samples = np.zeros((sweeps, len(columns)))
    with blas_threads(threads) as fixed:
        for x in xs:  # warm-up: page in W, let the library pick and prepare each shape's kernel
            w @ x
        for s in range(sweeps):
            order = range(len(columns)) if s % 2 == 0 else reversed(range(len(columns)))
            for i in order:
                t0 = time.perf_counter()
                w @ xs[i]
                samples[s, i] = time.perf_counter() - t0
            if progress:
                progress(s + 1, sweeps, samples[s].copy())
    seconds = samples.min(axis=0)
    columns = np.array(columns)
    return {"columns": columns, "samples": samples, "seconds": seconds, "spread": samples.max(axis=0) / seconds,
            "weight_bytes": w.nbytes, "flops": 2.0 * rows * cols * columns, "threads": fixed}


def _fit(columns, seconds, weight_bytes, flops):
    memory_bound = columns <= 4
    bandwidth = float(np.max(weight_bytes / seconds[memory_bound])) if memory_bound.any() else weight_bytes / seconds[0]
    rates = flops / seconds
    return bandwidth, float(np.max(rates)), rates


def fit_roofline(m, bend=1.25):
    """The roofline read off a time_matmul result, as a dict (FLOPs per byte, as everywhere in 07).

    "bandwidth": the weight bytes over the fastest of the 1- to 4-column products (they are all
    memory traffic; which one is fastest depends on the library's kernels). "peak": the best FLOP
    rate any column count reached, a lower bound on the true peak. "ridge": peak / bandwidth.
    "bent": whether the curve bends within the measured range, i.e. doubling the columns of the
    widest products raised the FLOP rate by less than `bend`; if not, the true ridge lies above
    "ridge" ("ridge above X"). With per-sweep samples, "bandwidth_range", "peak_range" and
    "ridge_range" are the (lowest, highest) of the same fit made on each sweep alone.
    """
    columns, seconds = np.asarray(m["columns"]), np.asarray(m["seconds"], dtype=float)
    bandwidth, peak, rates = _fit(columns, seconds, m["weight_bytes"], m["flops"])
    bent = len(rates) >= 2 and rates[-1] < bend * rates[-2]
    out = {"bandwidth": bandwidth, "peak": peak, "ridge": peak / bandwidth, "bent": bool(bent)}
    if "samples" in m:
        fits = [_fit(columns, row, m["weight_bytes"], m["flops"])[:2] for row in np.asarray(m["samples"])]
        bws, peaks = np.array([f[0] for f in fits]), np.array([f[1] for f in fits])
        out.update(bandwidth_range=(bws.min(), bws.max()), peak_range=(peaks.min(), peaks.max()),
                   ridge_range=((peaks / bws).min(), (peaks / bws).max()))
    return out


def roofline_summary(fit):
    """One line: bandwidth, peak and the ridge ("near X" if the curve bent, "above X" if it never did)."""
    where = "near" if fit["bent"] else "above"
    line = (f"{fit['bandwidth'] / 1e9:.1f} GB/s from memory, at least {fit['peak'] / 1e9:.1f} GFLOP/s, "
            f"ridge {where} {fit['ridge']:.1f} FLOPs per byte")
    if "ridge_range" in fit:
        (b0, b1), (r0, r1) = fit["bandwidth_range"], fit["ridge_range"]
        line += f"\n(sweep by sweep: {b0 / 1e9:.1f}-{b1 / 1e9:.1f} GB/s, ridge {r0:.1f}-{r1:.1f})"
    return line
