"""Notebook 07 (roofline): plausible wrong answers and correct variants, per graded function."""
AID = "07_roofline"

_WB_HEAD = '''
def weight_bytes(cfg, bytes_per_param=2):
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    h = d // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * h
'''


def _wb(layer="2 * d * d + 2 * d * kv + 3 * d * f + 2 * d",
        head='0 if cfg["tie_word_embeddings"] else V * d',
        total='V * d + cfg["num_hidden_layers"] * layer + d + head',
        ret="params * bytes_per_param"):
    return _WB_HEAD + f"""    layer = {layer}
    head = {head}
    params = {total}
    return {ret}
"""


_FM_HEAD = '''
def forward_macs(cfg, n_tokens, ctx):
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * (d // cfg["num_attention_heads"])
'''


def _fm(layer="2 * d * d + 2 * d * kv + 3 * d * f + 2 * ctx * d",
        ret='n_tokens * (cfg["num_hidden_layers"] * layer + d * V)'):
    return _FM_HEAD + f"""    layer = {layer}
    return {ret}
"""


def _st(memory='(weight_bytes(cfg) + batch * hw.kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]',
        compute='2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]',
        ret="max(memory, compute)"):
    return f"""
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    memory = {memory}
    compute = {compute}
    return {ret}
"""


def _cb(per_seq='2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"] - hw.kv_cache_bytes(cfg, ctx) / acc["bandwidth"]',
        ret='weight_bytes(cfg) / acc["bandwidth"] / per_seq',
        guard=True):
    body = "    if per_seq <= 0:\n        return math.inf\n" if guard else ""
    return f"""
def crossover_batch(cfg, acc, n_tokens, ctx):
    per_seq = {per_seq}
{body}    return {ret}
"""


def _cbs(expr):
    return f"""
def compute_bound_step_time(cfg, acc, n_tokens, ctx, batch=1):
    return {expr}
"""


CATALOG = {
    "weight_bytes": {
        "wrong": {
            "bytes per parameter ignored (always 2)": _wb(ret="params * 2"),
            "returns the parameter count, not bytes": _wb(ret="params"),
            "LM head dropped from an untied model": _wb(head="0"),
            "tied embeddings counted twice (LM head always added)": _wb(head="V * d"),
            "SwiGLU's third matrix dropped": _wb(layer="2 * d * d + 2 * d * kv + 2 * d * f + 2 * d"),
            "grouped-query attention ignored (k and v as d x d)": _wb(layer="4 * d * d + 3 * d * f + 2 * d"),
            "norm vectors left out": _wb(layer="2 * d * d + 2 * d * kv + 3 * d * f",
                                         total='V * d + cfg["num_hidden_layers"] * layer + head'),
            "embedding table left out": _wb(total='cfg["num_hidden_layers"] * layer + d + head'),
            "the seed's rounded 6.74B for every model": """
def weight_bytes(cfg, bytes_per_param=2):
    return 6.74e9 * bytes_per_param
""",
        },
        "right": {
            "term by term, as a float": """
def weight_bytes(cfg, bytes_per_param=2):
    d = float(cfg["hidden_size"])
    heads, kv_heads = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head = d / heads
    attn = d * d + d * kv_heads * head * 2 + d * d
    mlp = 3 * d * cfg["intermediate_size"]
    norms = 2 * d
    total = cfg["vocab_size"] * d + cfg["num_hidden_layers"] * (attn + mlp + norms) + d
    if not cfg.get("tie_word_embeddings", False):
        total += cfg["vocab_size"] * d
    return total * bytes_per_param
""",
            "a list of matrix shapes, summed": """
def weight_bytes(cfg, bytes_per_param=2):
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * (d // cfg["num_attention_heads"])
    shapes = [(V, d)]
    for _ in range(cfg["num_hidden_layers"]):
        shapes += [(d, d), (d, kv), (d, kv), (d, d), (d, f), (d, f), (f, d), (1, d), (1, d)]
    shapes.append((1, d))
    if not cfg["tie_word_embeddings"]:
        shapes.append((d, V))
    return sum(r * c for r, c in shapes) * bytes_per_param
""",
        },
    },
    "forward_macs": {
        "wrong": {
            "the seed page's formula (no third SwiGLU matrix, no LM head)": """
def forward_macs(cfg, n_tokens, ctx):
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    return n_tokens * cfg["num_hidden_layers"] * (4 * d * d + 2 * d * f + 2 * ctx * d)
""",
            "LM head dropped": _fm(ret='n_tokens * cfg["num_hidden_layers"] * layer'),
            "SwiGLU's third matrix dropped": _fm(layer="2 * d * d + 2 * d * kv + 2 * d * f + 2 * ctx * d"),
            "FLOPs, not MACs (twice the answer)": _fm(ret='2 * n_tokens * (cfg["num_hidden_layers"] * layer + d * V)'),
            "attention over the context missing": _fm(layer="2 * d * d + 2 * d * kv + 3 * d * f"),
            "attention counted once per pass, not per position": _fm(
                layer="2 * d * d + 2 * d * kv + 3 * d * f",
                ret='n_tokens * (cfg["num_hidden_layers"] * layer + d * V) + cfg["num_hidden_layers"] * 2 * ctx * d'),
            "attention as ctx * d (only the scores, not the weighted sum)": _fm(
                layer="2 * d * d + 2 * d * kv + 3 * d * f + ctx * d"),
            "grouped-query attention ignored (k and v as d x d)": _fm(layer="4 * d * d + 3 * d * f + 2 * ctx * d"),
            "attention over the narrower KV width (every query head still reads ctx keys)": _fm(
                layer="2 * d * d + 2 * d * kv + 3 * d * f + 2 * ctx * kv"),
            "LM head skipped when tied": _fm(
                ret='n_tokens * (cfg["num_hidden_layers"] * layer + (0 if cfg["tie_word_embeddings"] else d * V))'),
        },
        "right": {
            "per position in a loop, as floats": """
def forward_macs(cfg, n_tokens, ctx):
    d, f, V = float(cfg["hidden_size"]), cfg["intermediate_size"], cfg["vocab_size"]
    head = d / cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * head
    total = 0.0
    for _ in range(n_tokens):
        for _ in range(cfg["num_hidden_layers"]):
            total += d * d + 2 * d * kv + d * d      # q, k, v, o
            total += 3 * d * f                        # gate, up, down
            total += ctx * d + ctx * d                # scores, weighted sum
        total += d * V                                # LM head
    return total
""",
            "with numpy on a vector of matrix sizes": """
def forward_macs(cfg, n_tokens, ctx):
    d, f, V, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    kv = cfg["num_key_value_heads"] * (d // cfg["num_attention_heads"])
    sizes = np.array([d * d, d * kv, d * kv, d * d, d * f, d * f, f * d, 2 * ctx * d], dtype=np.int64)
    return int(n_tokens) * int(L * sizes.sum() + d * V)
""",
        },
    },
    "intensity": {
        "wrong": {
            "FLOPs per byte, not MACs": """
def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    return 2 * forward_macs(cfg, n_tokens, ctx) / weight_bytes(cfg, bytes_per_param)
""",
            "bytes_per_param not passed on": """
def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    return forward_macs(cfg, n_tokens, ctx) / weight_bytes(cfg)
""",
            "bytes per MAC (inverted)": """
def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    return weight_bytes(cfg, bytes_per_param) / forward_macs(cfg, n_tokens, ctx)
""",
            "per token, ignoring n_tokens": """
def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    return forward_macs(cfg, 1, ctx) / weight_bytes(cfg, bytes_per_param)
""",
            "bytes read once per token": """
def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    return forward_macs(cfg, n_tokens, ctx) / (n_tokens * weight_bytes(cfg, bytes_per_param))
""",
        },
        "right": {
            "MACs per token times tokens, over bytes": """
def intensity(cfg, n_tokens, ctx, bytes_per_param=2):
    per_token = forward_macs(cfg, 1, ctx)
    return n_tokens * per_token / weight_bytes(cfg, bytes_per_param)
""",
        },
    },
    "step_time": {
        "wrong": {
            "sum of memory and compute time, not the max": _st(ret="memory + compute"),
            "MACs over peak (FLOPs halved)": _st(compute='batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "KV cache not read": _st(memory='weight_bytes(cfg) / acc["bandwidth"]'),
            "one KV cache for the whole batch": _st(
                memory='(weight_bytes(cfg) + hw.kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]'),
            "weights read once per sequence": _st(
                memory='batch * (weight_bytes(cfg) + hw.kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]'),
            "compute not multiplied by the batch": _st(compute='2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "memory time only": _st(ret="memory"),
            "compute time only": _st(ret="compute"),
        },
        "right": {
            "FLOPs and bytes first, then the roofline": """
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    flops = 2.0 * batch * forward_macs(cfg, n_tokens, ctx)
    nbytes = weight_bytes(cfg) + batch * hw.kv_cache_bytes(cfg, ctx)
    if flops / nbytes >= acc["peak_flops"] / acc["bandwidth"]:
        return flops / acc["peak_flops"]
    return nbytes / acc["bandwidth"]
""",
        },
    },
    "crossover_batch": {
        "wrong": {
            "KV-cache term missing": _cb(per_seq='2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "MACs over peak (FLOPs halved)": _cb(
                per_seq='forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"] - hw.kv_cache_bytes(cfg, ctx) / acc["bandwidth"]'),
            "tokens per pass, not sequences": _cb(ret='n_tokens * weight_bytes(cfg) / acc["bandwidth"] / per_seq'),
            "no inf when it never crosses": _cb(guard=False),
            "rounded up to a whole batch": """
def crossover_batch(cfg, acc, n_tokens, ctx):
    per_seq = 2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"] - hw.kv_cache_bytes(cfg, ctx) / acc["bandwidth"]
    if per_seq <= 0:
        return math.inf
    return math.ceil(weight_bytes(cfg) / acc["bandwidth"] / per_seq)
""",
        },
        "right": {
            "intensity form: B = W / (2M / ridge - KV)": """
def crossover_batch(cfg, acc, n_tokens, ctx):
    ridge = acc["peak_flops"] / acc["bandwidth"]
    denom = 2 * forward_macs(cfg, n_tokens, ctx) / ridge - hw.kv_cache_bytes(cfg, ctx)
    return weight_bytes(cfg) / denom if denom > 0 else float("inf")
""",
            "bisection on step times": """
def crossover_batch(cfg, acc, n_tokens, ctx):
    def gap(b):
        mem = (weight_bytes(cfg) + b * hw.kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]
        return 2 * b * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"] - mem
    if gap(1e12) <= 0:
        return math.inf
    lo, hi = 0.0, 1e12
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if gap(mid) > 0 else (mid, hi)
    return (lo + hi) / 2
""",
        },
    },
    "compute_bound_step_time": {
        "wrong": {
            "the honest step time (nothing broken)": _cbs("step_time(cfg, acc, n_tokens, ctx, batch)"),
            "MACs over peak (FLOPs halved)": _cbs('batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "batch ignored": _cbs('2 * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "tokens times the memory-bound time": _cbs("n_tokens * step_time(cfg, acc, 1, ctx, batch)"),
            "context attention left out": _cbs('2 * batch * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"]'),
        },
        "right": {
            "per token, times tokens": """
def compute_bound_step_time(cfg, acc, n_tokens, ctx, batch=1):
    per_token = 2.0 * forward_macs(cfg, 1, ctx) / acc["peak_flops"]
    return n_tokens * batch * per_token
""",
        },
    },
}


# The message a student with each of these mistakes must read (a fragment of it).
MESSAGES = {
    ("weight_bytes", "bytes per parameter ignored (always 2)"): "multiply by the argument",
    ("weight_bytes", "returns the parameter count, not bytes"): "multiply it by bytes_per_param",
    ("weight_bytes", "LM head dropped from an untied model"): "the LM head (d x V) is missing",
    ("weight_bytes", "tied embeddings counted twice (LM head always added)"): "tie_word_embeddings is true",
    ("weight_bytes", "SwiGLU's third matrix dropped"): "SwiGLU has three matrices",
    ("weight_bytes", "grouped-query attention ignored (k and v as d x d)"): "grouped-query attention",
    ("weight_bytes", "norm vectors left out"): "RMSNorm vectors",
    ("forward_macs", "the seed page's formula (no third SwiGLU matrix, no LM head)"): "the seed page's count",
    ("forward_macs", "LM head dropped"): "the LM head (d x V MACs per position) is missing",
    ("forward_macs", "SwiGLU's third matrix dropped"): "SwiGLU has three matrices",
    ("forward_macs", "FLOPs, not MACs (twice the answer)"): "not FLOPs",
    ("forward_macs", "attention over the context missing"): "attention over the context",
    ("forward_macs", "grouped-query attention ignored (k and v as d x d)"): "grouped-query attention",
    ("forward_macs", "LM head skipped when tied"): "the head still multiplies",
    ("intensity", "bytes_per_param not passed on"): "pass bytes_per_param on",
    ("step_time", "sum of memory and compute time, not the max"): "not their sum",
    ("crossover_batch", "KV-cache term missing"): "include batch x kv_cache_bytes",
    ("crossover_batch", "MACs over peak (FLOPs halved)"): "FLOPs are 2 x MACs",
    ("crossover_batch", "tokens per pass, not sequences"): "not tokens per pass",
    ("crossover_batch", "no inf when it never crosses"): "return math.inf",
    ("crossover_batch", "rounded up to a whole batch"): "not a rounded batch size",
    ("compute_bound_step_time", "the honest step time (nothing broken)"): "that is the honest step time",
    ("compute_bound_step_time", "MACs over peak (FLOPs halved)"): "FLOPs are 2 x MACs",
}
for (_func, _desc), _fragment in MESSAGES.items():
    CATALOG[_func]["wrong"][_desc] = (CATALOG[_func]["wrong"][_desc], _fragment)
