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


def step_time(cfg, acc, n_tokens, ctx, batch=1):
    """Seconds for one pass: n_tokens new positions for each of batch sequences with ctx cached each.

    max(bytes / bandwidth, FLOPs / peak): the weights are read once for the whole batch, each
    sequence's KV cache once, and FLOPs = 2 * batch * forward_macs(cfg, n_tokens, ctx).
    """
    memory = pass_bytes(cfg, n_tokens, ctx, batch) / acc["bandwidth"]
    compute = 2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]
    return max(memory, compute)


def step_times(cfg, acc, n_tokens, ctx, batches):
    """step_time over an array of batch sizes at once (the widget's curve)."""
    b = np.asarray(batches, dtype=float)
    memory = (weight_bytes(cfg) + b * kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]
    compute = 2 * b * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]
    return np.maximum(memory, compute)


def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    """BROKEN on purpose (notebook 07's break-it): the hardware explainer's price of a pass.

    It leaves the KV cache out entirely, both the bytes of reading it and the attention
    arithmetic over it, so `ctx` is ignored: the honest step time of an empty context.
    """
    return step_time(cfg, acc, n_tokens, 0, batch)


def crossover_batch(cfg, acc, n_tokens, ctx):
    """The batch size (a real number) at which a pass of n_tokens per sequence becomes compute-bound.

    Solves (W + B * KV) / bandwidth = 2 * B * MACs / peak for B, with W the weight bytes, KV one
    sequence's cache bytes at ctx and MACs = forward_macs(cfg, n_tokens, ctx). math.inf if the
    compute time per sequence never exceeds its cache-reading time.
    """
    w = weight_bytes(cfg) / acc["bandwidth"]
    per_seq = 2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"] - kv_cache_bytes(cfg, ctx) / acc["bandwidth"]
    return w / per_seq if per_seq > 0 else math.inf


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


def draw_deployment(fig, batch=1, accelerator="H100", context=1024, k=4, a=0.8, overhead_ms=0.8):
    """The deployment widget's figure: one round's step times at this batch, and the speedup over
    every batch that fits in memory (a batch that does not fit shows its memory bill instead).

    Returns deployment(...) without its curves: the numbers tests read as widget.result.
    """
    from matplotlib.ticker import MaxNLocator, NullLocator

    from .style import COLORS
    r = deployment(accelerator, context, batch, k, a, overhead_ms)
    cap, n = r["max_batch"], len(r["batches"])
    # Fixed margins and no layout engine: with any engine (even "none") savefig lays the figure
    # out in a first, unrendered draw before the real one, which was a third of a redraw's time
    # (issue 17's 100 ms budget); these margins fit the labels.
    fig.set_layout_engine(None)
    kept = getattr(fig, "_deployment_axes", ())
    if len(kept) == 2 and not fig.axes:  # the widget cleared its figure: put the same (emptied) axes back
        ax1, ax2 = (fig.add_axes(ax) for ax in kept)
    else:                                 # building axes is a seventh of a redraw, so it happens once
        ax1, ax2 = fig.subplots(1, 2, width_ratios=[1, 1.8], gridspec_kw=dict(
            left=0.075, right=0.985, bottom=0.2, top=0.9, wspace=0.22))
        fig._deployment_axes = (ax1, ax2)
    if r["fits"]:
        drafting = k * r["draft_bytes_ms"]
        ax1.bar([0, 1, 1, 2], [r["plain_ms"], drafting, k * overhead_ms, r["verify_ms"]],
                bottom=[0, 0, drafting, 0], hatch=["", "", "//", ""], edgecolor="white", linewidth=0,
                color=[COLORS["plain"], COLORS["draft"], COLORS["draft"], COLORS["target"]])
        ax1.set_xticks([0, 1, 2], ["plain\nstep", f"{k} draft steps\n(// overhead)", "verify\npass"])
        ax1.set_ylabel("ms")
        ax1.set_title(f"One round at batch {batch}", y=1.0)
    else:
        used = [r["weights_gb"], r["memory_gb"] - r["weights_gb"]]
        ax1.bar([0, 0], used, bottom=[0, used[0]], color=[COLORS["plain"], COLORS["rejected"]], width=0.5)
        ax1.axhline(r["capacity_gb"], color="black", lw=1.5)
        ax1.set_xticks([0], [f"batch {batch}"])
        ax1.set(xlim=(-0.8, 0.8), ylabel="GB")
        ax1.set_title(f"Needs {r['memory_gb']:.0f} GB of {r['capacity_gb']:.0f}", y=1.0)
        ax1.text(0.3, r["capacity_gb"], "memory", va="bottom", fontsize=8)
        ax1.text(0, used[0] / 2, "weights", ha="center", va="center", color="white", fontsize=8)
        ax1.text(0, used[0] + used[1] / 2, "KV caches", ha="center", va="center", color="white", fontsize=8)
    shown = _CURVE[_CURVE < min(cap, n)]
    xs = r["batches"][shown]
    ax2.plot(xs, r["ideal_curve"][shown], color=COLORS["target"], lw=1, ls="--")
    ax2.plot(xs, r["speedup_curve"][shown], color=COLORS["target"], lw=2)
    # Labels beside the curves' flat start instead of a legend (a legend was a fifth of a redraw).
    top, low = float(r["ideal_curve"][0]), float(r["speedup_curve"][0])
    ax2.text(1.15, top + 0.06, "ideal draft (bytes only)", fontsize=8, va="bottom", color=COLORS["target"])
    ax2.text(1.15, low - 0.08 if top - low < 0.3 else low + 0.06, f"draft + {overhead_ms:.1f} ms per step",
             fontsize=8, va="top" if top - low < 0.3 else "bottom", color=COLORS["target"])
    ax2.axhline(1, color=COLORS["floor"], ls=":", lw=1)
    if cap < n:
        ax2.axvspan(max(cap, 1), n, color=COLORS["floor"], alpha=0.25, lw=0)
        ax2.text(n * 0.9, 0.15, f"more than {cap}\ndo not fit", ha="right", fontsize=8)
    ax2.set(xscale="log", xlim=(0.8, n), ylim=(0, max(3.5, 1.1 * float(r["ideal_curve"][0]))),
            xlabel="batch size (sequences)", ylabel="speedup")
    # Plain decade labels and fixed title positions: a log axis' default labels are mathtext ($10^2$),
    # parsed again at every redraw, and an automatic title position measures every tick label.
    ax2.set_xticks([1, 10, 100, 1000], ["1", "10", "100", "1000"])
    ax2.xaxis.set_minor_locator(NullLocator())
    slow = r["slower_batch"]
    ending = f"slower from batch {slow}" if slow else "never slower while it fits"
    if r["fits"]:
        ax2.plot([batch], [r["speedup"]], "o", color=COLORS["rejected"])
        ax2.set_title(f"{r['speedup']:.2f}x at batch {batch}; {ending}", y=1.0)
    else:
        ax2.axvline(batch, color=COLORS["rejected"], lw=1.5)
        ax2.set_title(f"Batch {batch} does not fit: at most {cap} sequences", color=COLORS["rejected"], y=1.0)
    # Few ticks, no vertical grid under the bars: tick labels and grid lines are most of the drawing.
    ax1.yaxis.set_major_locator(MaxNLocator(4))
    ax1.grid(axis="x", visible=False)
    ax2.set_yticks(np.arange(0, ax2.get_ylim()[1] + 1e-9, 1.0))
    return {key: v for key, v in r.items() if key not in ("batches", "speedup_curve", "ideal_curve")}


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
