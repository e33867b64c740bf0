"""A decoder-only transformer in NumPy, with a KV cache: notebook 10's target and draft.

The layout is GPT-2's (pre-LayerNorm blocks, learned positions, tanh-GELU), character level: tokens
are ASCII codes 0..127. `data/models/make_models.py` trained the shipped weights with PyTorch; this
file is the only forward the course runs, and tests check it against PyTorch's logits.

    target = load("target")                  # 4 layers, d = 192
    cache = target.new_cache()
    logits = target.forward(encode("def f(x"), cache)   # prefill: one row of logits per token
    logits = target.forward([ord(")")], cache)          # one more token; the cache grows by 1
    cache.truncate(5)                                   # forget everything after the 5th token

A cache holds, per layer, the keys and values of every token already processed, preallocated for
`CONTEXT` positions; `cache.length` is how many are valid, and the next token's position.
"""
import json
from dataclasses import dataclass

import numpy as np

from .datafiles import DATA

MODELS = DATA / "models"
V = 128
CONTEXT = 128


def encode(text):
    """Text to tokens (ASCII codes); characters outside ASCII are not allowed."""
    return list(text.encode("ascii"))


def decode(tokens):
    return bytes(int(t) for t in tokens).decode("ascii", errors="replace")


def softmax(logits, axis=-1):
    z = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x))))


class Cache:
    """Keys and values of the tokens processed so far: arrays (layers, heads, CONTEXT, head_dim)."""

    def __init__(self, n_layer, n_head, head_dim, dtype=np.float32):
        self.k = np.zeros((n_layer, n_head, CONTEXT, head_dim), dtype)
        self.v = np.zeros_like(self.k)
        self.length = 0

    def truncate(self, length):
        """Keep the first `length` positions (the rest is overwritten by the next forward)."""
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot truncate a cache of length {self.length} to {length}")
        self.length = length

    def copy(self):
        new = Cache.__new__(Cache)
        new.k, new.v, new.length = self.k.copy(), self.v.copy(), self.length
        return new


@dataclass
class Transformer:
    """Weights (float32 arrays, x @ W convention) and shape. `n_layer` may be fewer than the
    weights hold: then the forward stops after that many blocks and applies the final LayerNorm
    and head there (an early exit, which is how the target drafts for itself)."""
    w: dict
    n_layer: int
    n_head: int
    d: int
    name: str = "model"

    def new_cache(self):
        return Cache(self.n_layer, self.n_head, self.d // self.n_head)

    def exit_at(self, layer):
        """The same model cut after `layer` blocks: its first blocks, then the final LayerNorm and head."""
        return Transformer(self.w, layer, self.n_head, self.d, f"{self.name}[:{layer}]")

    def forward(self, tokens, cache):
        """Logits (n, V) for n new tokens at positions cache.length.., whose keys and values are
        appended to `cache`. Row i is the next-token logits after tokens[i]."""
        w, H = self.w, self.n_head
        tokens = np.asarray(tokens, dtype=np.intp).reshape(-1)
        n, L = len(tokens), cache.length
        if n == 0:
            return np.zeros((0, V), np.float32)
        if L + n > CONTEXT:
            raise ValueError(f"{L} + {n} tokens exceed the models' context of {CONTEXT}")
        hd = self.d // H
        scale = np.float32(1 / np.sqrt(hd))   # a float64 scalar here would promote every activation after it
        x = w["wte"][tokens] + w["wpe"][L:L + n]
        mask = np.triu(np.full((n, n), -np.inf, np.float32), 1) if n > 1 else None
        for i in range(self.n_layer):
            p = f"h{i}."
            qkv = layer_norm(x, w[p + "ln1.g"], w[p + "ln1.b"]) @ w[p + "qkv.w"] + w[p + "qkv.b"]
            q, k, v = qkv.reshape(n, 3, H, hd).transpose(1, 2, 0, 3)   # each (H, n, hd)
            cache.k[i, :, L:L + n], cache.v[i, :, L:L + n] = k, v
            att = q @ cache.k[i, :, :L + n].transpose(0, 2, 1) * scale  # (H, n, L+n)
            if mask is not None:
                att[:, :, L:] += mask
            a = softmax(att) @ cache.v[i, :, :L + n]                   # (H, n, hd)
            x = x + a.transpose(1, 0, 2).reshape(n, self.d) @ w[p + "proj.w"] + w[p + "proj.b"]
            h = gelu(layer_norm(x, w[p + "ln2.g"], w[p + "ln2.b"]) @ w[p + "fc.w"] + w[p + "fc.b"])
            x = x + h @ w[p + "out.w"] + w[p + "out.b"]
        cache.length = L + n
        return layer_norm(x, w["ln_f.g"], w["ln_f.b"]) @ w["head"]

    def probs(self, tokens, cache, temperature=1.0):
        """Next-token distributions (n, V) for n new tokens: forward, then a float64 softmax (so
        that every caller who samples from them sees the same numbers, bit for bit)."""
        return softmax(self.forward(tokens, cache).astype(np.float64) / temperature)

    def weight_bytes(self, bytes_per_param=4):
        """Bytes of the weights one forward reads (the blocks it runs, the embeddings' rows aside)."""
        blocks = sum(v.size for k, v in self.w.items() if k[0] == "h" and k[1].isdigit() and int(k[1:k.index(".")]) < self.n_layer)
        return (blocks + self.w["head"].size + self.w["ln_f.g"].size * 2) * bytes_per_param


def hollow(model, d=None, seed=0):
    """A model with `model`'s layers, heads and code path but a width of d (the number of heads by
    default, one number per head): its arithmetic is next to nothing, so its forward's time is what
    the NumPy calls themselves cost. Random weights; it predicts nothing."""
    d = d or model.n_head
    rng = np.random.default_rng(seed)
    shapes = {"wte": (V, d), "wpe": (CONTEXT, d), "ln_f.g": (d,), "ln_f.b": (d,), "head": (d, V)}
    for i in range(model.n_layer):
        shapes |= {f"h{i}.ln1.g": (d,), f"h{i}.ln1.b": (d,), f"h{i}.ln2.g": (d,), f"h{i}.ln2.b": (d,),
                   f"h{i}.qkv.w": (d, 3 * d), f"h{i}.qkv.b": (3 * d,), f"h{i}.proj.w": (d, d), f"h{i}.proj.b": (d,),
                   f"h{i}.fc.w": (d, 4 * d), f"h{i}.fc.b": (4 * d,), f"h{i}.out.w": (4 * d, d), f"h{i}.out.b": (d,)}
    w = {k: (0.1 * rng.standard_normal(shape)).astype(np.float32) for k, shape in shapes.items()}
    return Transformer(w, model.n_layer, model.n_head, d, f"{model.name} (hollow, d = {d})")


_LOADED = {}


def _one_blas_thread():
    """These models are small: a BLAS call splits a few hundred thousand multiply-adds across threads
    that then wait for each other (on a busy 2-core machine this module's tests ran many times
    slower with two threads than with one). Loading a model sets the process's BLAS to one thread, once, for good."""
    if not _LOADED:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)


def info():
    """What tiny_models.json records: configs, steps, seeds, training time, loss curves, corpus."""
    return json.loads((MODELS / "tiny_models.json").read_text())


def load(name):
    """The shipped "target" or "draft" (weights stored fp16, computed in float32); cached per process.
    The first load sets NumPy's BLAS to one thread (see _one_blas_thread)."""
    if name not in _LOADED:
        _one_blas_thread()
        cfg = info()["models"][name]
        with np.load(MODELS / f"tiny_{name}.npz") as z:
            w = {k: z[k].astype(np.float32) for k in z.files}
        _LOADED[name] = Transformer(w, cfg["n_layer"], cfg["n_head"], cfg["d"], name)
    return _LOADED[name]


def reference_logits():
    """PyTorch's float32 logits for the fixed prompt, per model and exit: {"target@4": (n, V), ...}."""
    with np.load(MODELS / "tiny_reference.npz") as z:
        return {k: z[k] for k in z.files}
