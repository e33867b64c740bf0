"""Notebook 07 (roofline): plausible wrong answers and correct variants, per graded function.
Long because it is a table: one entry per mistake the grader is held to."""
from devtools.catalog import edit

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


def _st(matmuls='max(weight_bytes(cfg) / acc["bandwidth"], 2 * batch * mm / acc["peak_flops"])',
        attention='max(batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"], 2 * batch * att / acc["peak_flops"])',
        mm="forward_macs(cfg, n_tokens, 0)", att="forward_macs(cfg, n_tokens, ctx) - forward_macs(cfg, n_tokens, 0)",
        ret="matmuls + attention"):
    return f"""
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    mm = {mm}
    att = {att}
    matmuls = {matmuls}
    attention = {attention}
    return {ret}
"""



def _ex(memory='weight_bytes(cfg) / acc["bandwidth"]',
        compute='2 * batch * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"]', ret="max(memory, compute)"):
    return f"""
def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    memory = {memory}
    compute = {compute}
    return {ret}
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
            "a numpy array, not a number": _wb(ret="np.array([params * bytes_per_param])"),
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
        "delegate": {
            "the course's parameter count times the bytes": """
def weight_bytes(cfg, bytes_per_param=2):
    return hw.param_count(cfg) * bytes_per_param
""",
            "the course's reference, imported under another name": """
from speclab.speed.hardware import weight_bytes as _size
def weight_bytes(cfg, bytes_per_param=2):
    return _size(cfg, bytes_per_param)
""",
            "the course's per-layer count, reached through a module attribute": """
import speclab
def weight_bytes(cfg, bytes_per_param=2):
    per_param = speclab.speed.hardware.layer_params(cfg) * cfg["num_hidden_layers"]
    d, V = cfg["hidden_size"], cfg["vocab_size"]
    head = 0 if cfg["tie_word_embeddings"] else V * d
    return (per_param + V * d + d + head) * bytes_per_param
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
            "the embedding lookup counted as a product": _fm(ret='n_tokens * (cfg["num_hidden_layers"] * layer + 2 * d * V)'),
            "norms counted as MACs": _fm(ret='n_tokens * (cfg["num_hidden_layers"] * (layer + 2 * d) + d + d * V)'),
            "attention over a context that grows with each new position": """
def forward_macs(cfg, n_tokens, ctx):
    d, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * (d // cfg["num_attention_heads"])
    total = 0
    for i in range(n_tokens):
        total += cfg["num_hidden_layers"] * (2 * d * d + 2 * d * kv + 3 * d * f + 2 * (ctx + i) * d) + d * V
    return total
""",
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
        "delegate": {
            "the course's reference through the module": """
def forward_macs(cfg, n_tokens, ctx):
    return hw.forward_macs(cfg, n_tokens, ctx)
""",
            "the course's intensity times the course's bytes (two helpers)": """
def forward_macs(cfg, n_tokens, ctx):
    return round(hw.intensity(cfg, n_tokens, ctx) * hw.weight_bytes(cfg) / 2)
""",
        },
    },
    "step_time": {
        "wrong": {
            "one max over the whole pass (the cache's reads hide the matmuls' arithmetic)": """
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    memory = (weight_bytes(cfg) + batch * kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]
    compute = 2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]
    return max(memory, compute)
""",
            "sum of memory and compute time inside each kernel, not the max": _st(
                matmuls='weight_bytes(cfg) / acc["bandwidth"] + 2 * batch * mm / acc["peak_flops"]',
                attention='batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"] + 2 * batch * att / acc["peak_flops"]'),
            "the two kernels overlapped (max of the kernels, not their sum)": _st(ret="max(matmuls, attention)"),
            "MACs over peak (FLOPs halved)": _st(
                matmuls='max(weight_bytes(cfg) / acc["bandwidth"], batch * mm / acc["peak_flops"])',
                attention='max(batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"], batch * att / acc["peak_flops"])'),
            "KV cache not read": _st(attention='2 * batch * att / acc["peak_flops"]'),
            "one KV cache for the whole batch": _st(
                attention='max(kv_cache_bytes(cfg, ctx) / acc["bandwidth"], 2 * batch * att / acc["peak_flops"])'),
            "weights read once per sequence": _st(
                matmuls='max(batch * weight_bytes(cfg) / acc["bandwidth"], 2 * batch * mm / acc["peak_flops"])'),
            "compute not multiplied by the batch": _st(
                matmuls='max(weight_bytes(cfg) / acc["bandwidth"], 2 * mm / acc["peak_flops"])'),
            "attention's arithmetic ignored (its cache bytes only)": _st(
                attention='batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"]'),
            "attention's arithmetic priced in the matmul kernel": _st(
                mm="forward_macs(cfg, n_tokens, ctx)", attention='batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"]'),
            "attention's arithmetic counted twice (matmuls at ctx)": _st(mm="forward_macs(cfg, n_tokens, ctx)"),
            "memory times only": _st(matmuls='weight_bytes(cfg) / acc["bandwidth"]',
                                     attention='batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"]'),
            "milliseconds, not seconds": _st(ret="1e3 * (matmuls + attention)"),
            "returns both times as a tuple": _st(ret="(matmuls, attention)"),
        },
        "right": {
            "FLOPs and bytes first, a ridge test per kernel": """
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    ridge = acc["peak_flops"] / acc["bandwidth"]
    total = 0.0
    for flops, nbytes in ((2.0 * batch * forward_macs(cfg, n_tokens, 0), weight_bytes(cfg)),
                          (2.0 * batch * (forward_macs(cfg, n_tokens, ctx) - forward_macs(cfg, n_tokens, 0)),
                           batch * kv_cache_bytes(cfg, ctx))):
        if nbytes and flops / nbytes >= ridge:
            total += flops / acc["peak_flops"]
        else:
            total += nbytes / acc["bandwidth"]
    return total
""",
            "numpy's maximum over a 2 x 2 table": """
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    m0, m = forward_macs(cfg, n_tokens, 0), forward_macs(cfg, n_tokens, ctx)
    times = np.array([[weight_bytes(cfg) / acc["bandwidth"], 2 * batch * m0 / acc["peak_flops"]],
                      [batch * kv_cache_bytes(cfg, ctx) / acc["bandwidth"], 2 * batch * (m - m0) / acc["peak_flops"]]])
    return float(times.max(axis=1).sum())
""",
            "attention's MACs written out (layers x 2 ctx d per position)": _st(
                att='n_tokens * cfg["num_hidden_layers"] * 2 * ctx * cfg["hidden_size"]'),
        },
        "delegate": {
            "the course's reference under another name": """
from speclab.speed.hardware import step_time as _price
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    return _price(cfg, acc, n_tokens, ctx, batch)
""",
            "the course's round times (a verify pass over n_tokens positions)": """
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    return hw.round_times(cfg, cfg, acc, n_tokens - 1, ctx, batch)[2]
""",
            "the course's two kernel times, added": """
def step_time(cfg, acc, n_tokens, ctx, batch=1):
    return sum(hw.kernel_times(cfg, acc, n_tokens, ctx, batch))
""",
        },
    },
    "explainer_step_time": {
        "wrong": {
            "the honest step time (nothing broken)": """
def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    return step_time(cfg, acc, n_tokens, ctx, batch)
""",
            "the one-max price with the cache (nothing left out)": _ex(
                memory='(weight_bytes(cfg) + batch * kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]',
                compute='2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "KV bytes left out, attention FLOPs kept": _ex(
                compute='2 * batch * forward_macs(cfg, n_tokens, ctx) / acc["peak_flops"]'),
            "attention FLOPs left out, KV bytes kept": _ex(
                memory='(weight_bytes(cfg) + batch * kv_cache_bytes(cfg, ctx)) / acc["bandwidth"]'),
            "compute-bound pretence (FLOPs alone)": _ex(ret="compute"),
            "memory time only (batch never matters)": _ex(ret="memory"),
            "MACs over peak (FLOPs halved)": _ex(compute='batch * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"]'),
            "compute not multiplied by the batch": _ex(compute='2 * forward_macs(cfg, n_tokens, 0) / acc["peak_flops"]'),
        },
        "right": {
            "the honest step time at an empty context": """
def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    return step_time(cfg, acc, n_tokens, 0, batch)
""",
            "one cache-free pass, written out with a ridge test": """
def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    flops = 2.0 * batch * forward_macs(cfg, n_tokens, 0)
    nbytes = float(weight_bytes(cfg))
    return max(nbytes / acc["bandwidth"], flops / acc["peak_flops"])
""",
        },
        "delegate": {
            "the course's broken variant": """
def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    return hw.explainer_step_time(cfg, acc, n_tokens, ctx, batch)
""",
            "the course's step time at ctx = 0": """
from speclab.speed import hardware as _hw
def explainer_step_time(cfg, acc, n_tokens, ctx, batch=1):
    return _hw.step_time(cfg, acc, n_tokens, 0, batch)
""",
        },
    },
    "best_gain": {
        "wrong": {
            "plain decoding held to speculation's capacity (the same-batch premise)": (edit(
                "plain = max(batch / step(target, acc, 1, ctx, batch) for batch in range(1, plain_fit + 1))",
                "plain = max(batch / step(target, acc, 1, ctx, batch) for batch in range(1, spec_fit + 1))"),
                "plain decoding holds no draft"),
            "plain decoding also holds the draft's weights": edit(
                "plain_fit = largest_batch(weight_bytes(target), kv_cache_bytes(target, ctx))",
                "plain_fit = largest_batch(weight_bytes(target) + weight_bytes(draft), kv_cache_bytes(target, ctx))"),
            "speculation's memory without the draft's caches": edit(
                "kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx))", "kv_cache_bytes(target, ctx))"),
            "the best same-batch speedup, not the best of each": """
def best_gain(step, target, draft, acc, a, k, ctx, overhead):
    fit = int((acc["memory"] - weight_bytes(target) - weight_bytes(draft))
              // (kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx)))
    tokens = expected_tokens(a, k)
    return max(tokens * step(target, acc, 1, ctx, b)
               / (k * (step(draft, acc, 1, ctx, b) + overhead) + step(target, acc, k + 1, ctx, b))
               for b in range(1, fit + 1))
""",
            "each deployment at its largest batch, not its best": edit(
                ("plain = max(batch / step(target, acc, 1, ctx, batch) for batch in range(1, plain_fit + 1))",
                 "plain = plain_fit / step(target, acc, 1, ctx, plain_fit)"),
                ("""spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))
           for batch in range(1, spec_fit + 1))""",
                 "spec = spec_fit * tokens / (k * (step(draft, acc, 1, ctx, spec_fit) + overhead) + step(target, acc, k + 1, ctx, spec_fit))")),
            "overhead ignored": (edit(
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))",
                "spec = max(batch * tokens / (k * step(draft, acc, 1, ctx, batch) + step(target, acc, k + 1, ctx, batch))"),
                "the overhead changed nothing"),
            "overhead paid once per round": edit(
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))",
                "spec = max(batch * tokens / (k * step(draft, acc, 1, ctx, batch) + overhead + step(target, acc, k + 1, ctx, batch))"),
            "draft priced at batch 1": edit(
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))",
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, 1) + overhead) + step(target, acc, k + 1, ctx, batch))"),
            "verify over k positions": edit(
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))",
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k, ctx, batch))"),
            "a round credited with one token per sequence": edit(
                "spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))",
                "spec = max(batch / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))"),
            "expected tokens with the wrong exponent": edit("tokens = expected_tokens(a, k)", "tokens = (1 - a ** k) / (1 - a)"),
            "plain over speculative (inverted)": (edit("return spec / plain", "return plain / spec"),
                                                  "fewer tokens per second than plain decoding"),
            "ignores the step it is given (prices with its own step_time)": (edit(
                ("plain = max(batch / step(target, acc, 1, ctx, batch) for batch in range(1, plain_fit + 1))",
                 "plain = max(batch / step_time(target, acc, 1, ctx, batch) for batch in range(1, plain_fit + 1))"),
                ("""spec = max(batch * tokens / (k * (step(draft, acc, 1, ctx, batch) + overhead) + step(target, acc, k + 1, ctx, batch))
           for batch in range(1, spec_fit + 1))""",
                 """spec = max(batch * tokens / (k * (step_time(draft, acc, 1, ctx, batch) + overhead)
                                + step_time(target, acc, k + 1, ctx, batch)) for batch in range(1, spec_fit + 1))""")),
                "with the `step` you are given"),
            "a batch that fills the memory exactly does not fit": edit(
                'return int((acc["memory"] - weights) // per_sequence)',
                'return math.ceil((acc["memory"] - weights) / per_sequence) - 1'),
        },
        "right": {
            "seconds per token, the cheapest of each, through draft_cost": """
def best_gain(step, target, draft, acc, a, k, ctx, overhead):
    plain_weights, spec_weights = weight_bytes(target), weight_bytes(target) + weight_bytes(draft)
    plain_seq, spec_seq = kv_cache_bytes(target, ctx), kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx)
    tokens = expected_tokens(a, k)
    plain_cost, spec_cost = [], []
    b = 1
    while plain_weights + b * plain_seq <= acc["memory"]:
        t = step(target, acc, 1, ctx, b)
        plain_cost.append(t / b)
        if spec_weights + b * spec_seq <= acc["memory"]:
            c = draft_cost(step(draft, acc, 1, ctx, b), t, overhead)
            spec_cost.append(t * (k * c + step(target, acc, k + 1, ctx, b) / t) / (b * tokens))
        b += 1
    return min(plain_cost) / min(spec_cost)
""",
            "numpy over the batches that fit": """
def best_gain(step, target, draft, acc, a, k, ctx, overhead):
    free = acc["memory"] - weight_bytes(target)
    plain_b = np.arange(1, int(free // kv_cache_bytes(target, ctx)) + 1)
    spec_b = np.arange(1, int((free - weight_bytes(draft)) // (kv_cache_bytes(target, ctx) + kv_cache_bytes(draft, ctx))) + 1)
    e = sum(a ** j for j in range(k + 1))
    plain = np.array([b / step(target, acc, 1, ctx, int(b)) for b in plain_b])
    spec = np.array([b * e / (k * step(draft, acc, 1, ctx, int(b)) + k * overhead + step(target, acc, k + 1, ctx, int(b)))
                     for b in spec_b])
    return float(spec.max() / plain.max())
""",
        },
        "delegate": {
            "the course's measure": """
def best_gain(step, target, draft, acc, a, k, ctx, overhead):
    return hw.best_gain(step, target, draft, acc, a, k, ctx, overhead)
""",
            "the course's two capacities in the reference's loops": """
from speclab.speed import hardware as _hw
def best_gain(step, target, draft, acc, a, k, ctx, overhead):
    tokens = expected_tokens(a, k)
    plain = max(b / step(target, acc, 1, ctx, b) for b in range(1, _hw.plain_max_batch(target, acc, ctx) + 1))
    spec = max(b * tokens / (k * (step(draft, acc, 1, ctx, b) + overhead) + step(target, acc, k + 1, ctx, b))
               for b in range(1, _hw.max_batch(target, draft, acc, ctx) + 1))
    return spec / plain
""",
        },
    },
    "advice_cost": {
        "wrong": {
            "the fixed-k question: rounds of k_max drafts only": ("""
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    believed = best_gain(explainer_step_time, target, draft, acc, a, k_max, ctx, overhead)
    honest = best_gain(step_time, target, draft, acc, a, k_max, ctx, overhead)
    return max(honest, 1.0) / (honest if believed > 1 else 1.0)
""", "asks only about rounds of k_max drafts"),
            "the team's k set against plain decoding only (the honest best k ignored)": edit(
                "best = max(max(honest), 1.0)                                     # what the best choice serves, the same way", "best = max(honest[chosen - 1], 1.0)"),
            "a tie goes to more drafts": (edit(
                "chosen = max(ks, key=lambda k: (believed[k - 1], -k))     # the team's k: a tie goes to fewer drafts", "chosen = max(ks, key=lambda k: (believed[k - 1], k))"), "no reason for a longer round"),
            "the team's k chosen by the honest price (only the yes/no taken from the explainer)": edit(
                "chosen = max(ks, key=lambda k: (believed[k - 1], -k))     # the team's k: a tie goes to fewer drafts", "chosen = max(ks, key=lambda k: (honest[k - 1], -k))"),
            "what the team runs priced its own way, not on its cards": edit(
                "runs = honest[chosen - 1] if believed[chosen - 1] > 1 else 1.0   # what it serves, per plain token/s", "runs = believed[chosen - 1] if believed[chosen - 1] > 1 else 1.0"),
            "a tie counted as speculation serving more (>= 1)": (edit(
                "runs = honest[chosen - 1] if believed[chosen - 1] > 1 else 1.0   # what it serves, per plain token/s", "runs = honest[chosen - 1] if believed[chosen - 1] >= 1 else 1.0"),
                "a tie is no reason to run a draft"),
            "the factor upside down (the team's choice over the better one)": edit(
                "return best / runs", "return runs / best"),
            "the honest gain over the explainer's (the transcribed forecasts)": ("""
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    believed = best_gain(explainer_step_time, target, draft, acc, a, k_max, ctx, overhead)
    honest = best_gain(step_time, target, draft, acc, a, k_max, ctx, overhead)
    return honest / believed
""", "sets two forecasts against each other"),
            "the best honest gain itself": """
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    return max(best_gain(step_time, target, draft, acc, a, k, ctx, overhead) for k in range(1, k_max + 1))
""",
            "believing costs nothing (1.0 everywhere)": """
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    return 1.0
""",
        },
        "right": {
            "the team's choice written out as a loop": """
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    team_k, team_forecast = 0, 1.0            # k = 0: plain decoding, forecast 1 by definition
    best = 1.0
    for k in range(1, k_max + 1):
        forecast = best_gain(explainer_step_time, target, draft, acc, a, k, ctx, overhead)
        if forecast > team_forecast:
            team_k, team_forecast = k, forecast
        best = max(best, best_gain(step_time, target, draft, acc, a, k, ctx, overhead))
    served = 1.0 if team_k == 0 else best_gain(step_time, target, draft, acc, a, team_k, ctx, overhead)
    return best / served
""",
            "numpy arrays, argmax (the first of equals)": """
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    believed = np.array([1.0] + [best_gain(explainer_step_time, target, draft, acc, a, k, ctx, overhead)
                                 for k in range(1, k_max + 1)])
    honest = np.array([1.0] + [best_gain(step_time, target, draft, acc, a, k, ctx, overhead)
                               for k in range(1, k_max + 1)])
    return float(honest.max() / honest[int(np.argmax(believed))])
""",
        },
        "delegate": {
            "the honest price taken from the course (speclab.speed.hardware.step_time)": """
from speclab.speed.hardware import step_time as _course_price
def advice_cost(target, draft, acc, a, k_max, ctx, overhead):
    ks = range(1, k_max + 1)
    believed = [best_gain(explainer_step_time, target, draft, acc, a, k, ctx, overhead) for k in ks]
    honest = [best_gain(_course_price, target, draft, acc, a, k, ctx, overhead) for k in ks]
    chosen = max(ks, key=lambda k: (believed[k - 1], -k))
    runs = honest[chosen - 1] if believed[chosen - 1] > 1 else 1.0
    return max(max(honest), 1.0) / runs
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
    ("weight_bytes", "the seed's rounded 6.74B for every model"): "no rounding",
    ("weight_bytes", "a numpy array, not a number"): "return a number",
    ("forward_macs", "the seed page's formula (no third SwiGLU matrix, no LM head)"): "the NumPy walk-through's count",
    ("forward_macs", "LM head dropped"): "the LM head (d x V MACs per position) is missing",
    ("forward_macs", "SwiGLU's third matrix dropped"): "SwiGLU has three matrices",
    ("forward_macs", "FLOPs, not MACs (twice the answer)"): "not FLOPs",
    ("forward_macs", "attention over the context missing"): "attention over the context",
    ("forward_macs", "grouped-query attention ignored (k and v as d x d)"): "grouped-query attention",
    ("forward_macs", "LM head skipped when tied"): "the head still multiplies",
    ("forward_macs", "the embedding lookup counted as a product"): "the embedding lookup",
    ("forward_macs", "norms counted as MACs"): "the norms",
    ("forward_macs", "attention over a context that grows with each new position"): "the same ctx",
    ("step_time", "one max over the whole pass (the cache's reads hide the matmuls' arithmetic)"): "one max over the whole pass",
    ("step_time", "sum of memory and compute time inside each kernel, not the max"): "not their sum",
    ("step_time", "the two kernels overlapped (max of the kernels, not their sum)"): "53.73 ms in all",
    ("step_time", "attention's arithmetic ignored (its cache bytes only)"): "plus attention's max(B KV / bandwidth, 2 B M_a / peak)",
    ("step_time", "milliseconds, not seconds"): "10.53 ms",
    ("step_time", "returns both times as a tuple"): "return the seconds as a number",
    ("explainer_step_time", "the honest step time (nothing broken)"): "that is the honest step time",
    ("explainer_step_time", "the one-max price with the cache (nothing left out)"): "that is the honest step time",
    ("explainer_step_time", "KV bytes left out, attention FLOPs kept"): "attention arithmetic over the cache",
    ("explainer_step_time", "attention FLOPs left out, KV bytes kept"): "no KV-cache bytes",
}
for (_func, _desc), _fragment in MESSAGES.items():
    CATALOG[_func]["wrong"][_desc] = (CATALOG[_func]["wrong"][_desc], _fragment)
