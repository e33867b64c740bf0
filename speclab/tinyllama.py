"""A tiny Llama with random weights: the stand-in notebook 10's graded tests hand the exercises.

It has SmolLM2's interface (speclab.smollm: `new_cache()`, `forward(tokens, cache, looped=True)`
returning float32 logits (T, vocab), a cache with `.length`, `.truncate(n)`, `.copy()`) and its
layout (RMSNorm, rotary positions with adjacent pairs, grouped-query attention, SwiGLU, tied
embeddings), at a size that runs a forward in well under a millisecond. The grader calls a student's
loop hundreds of times; on the real 135M model every test would cost seconds. What the tests check
(one pass equals k + 1 single steps, the cache rolled back, greedy equality, the accept rule) does not
depend on the weights being trained, only on the output depending on every token in the cache and on
its position, which attention and rotary positions give any random Llama.

    model = tiny(seed=0)
    cache = model.new_cache()
    logits = model.forward([5, 9, 2], cache)      # (3, vocab); cache.length == 3
    cache.truncate(1)                             # forget all but the first token
"""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Config:
    n_layers: int = 2
    d_model: int = 32
    n_heads: int = 4
    n_kv_heads: int = 2
    head_dim: int = 8
    d_ff: int = 48
    vocab: int = 24
    rope_base: float = 10000.0
    eps: float = 1e-5
    context: int = 512


class KVCache:
    """Per layer, the keys and values of every token seen: (layers, kv heads, context, head_dim)."""

    def __init__(self, cfg):
        shape = (cfg.n_layers, cfg.n_kv_heads, cfg.context, cfg.head_dim)
        self.k, self.v = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        self.length = 0

    def truncate(self, n):
        if not 0 <= n <= self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {n}")
        self.length = n

    def copy(self):
        other = KVCache.__new__(KVCache)
        other.k, other.v, other.length = self.k.copy(), self.v.copy(), self.length
        return other


def rms_norm(x, g, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def rope(x, positions, base):
    """Rotate adjacent pairs (x[2i], x[2i+1]) of every head by position * base^(-2i/head_dim)."""
    half = x.shape[-1] // 2
    freq = base ** (-np.arange(half, dtype=np.float32) * 2 / x.shape[-1])
    angle = positions[:, None].astype(np.float32) * freq                 # (T, half)
    cos, sin = np.cos(angle)[None], np.sin(angle)[None]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = even * cos - odd * sin, even * sin + odd * cos
    return out


def matmul(x, w, looped):
    """x (T, in) times w (out, in) transposed: one matrix product, or one matrix-vector product per row."""
    if looped:
        return np.stack([w @ row for row in x])
    return x @ w.T


class TinyLlama:
    def __init__(self, weights, cfg):
        self.w, self.cfg = weights, cfg
        self.bytes_per_token = sum(a.nbytes for a in weights.values())

    def new_cache(self):
        return KVCache(self.cfg)

    def exit_at(self, layers):
        """Early exit: the first `layers` blocks, then the final norm and the head (the same arrays)."""
        from dataclasses import replace
        return TinyLlama(self.w, replace(self.cfg, n_layers=layers))

    def forward(self, tokens, cache, looped=True):
        """float32 logits (len(tokens), vocab) after each token; the cache grows by len(tokens)."""
        c, w = self.cfg, self.w
        tokens = [int(t) for t in tokens]
        T, start = len(tokens), cache.length
        pos = np.arange(start, start + T)
        x = w["embed"][tokens]
        for i in range(c.n_layers):
            h = rms_norm(x, w[f"{i}.attn_norm"], c.eps)
            q = matmul(h, w[f"{i}.q"], looped).reshape(T, c.n_heads, c.head_dim).transpose(1, 0, 2)
            k = matmul(h, w[f"{i}.k"], looped).reshape(T, c.n_kv_heads, c.head_dim).transpose(1, 0, 2)
            v = matmul(h, w[f"{i}.v"], looped).reshape(T, c.n_kv_heads, c.head_dim).transpose(1, 0, 2)
            cache.k[i, :, start:start + T], cache.v[i, :, start:start + T] = rope(k, pos, c.rope_base), v
            x = x + matmul(self._attend(rope(q, pos, c.rope_base), cache, i, start + T), w[f"{i}.o"], looped)
            h = rms_norm(x, w[f"{i}.ffn_norm"], c.eps)
            gate, up = matmul(h, w[f"{i}.gate"], looped), matmul(h, w[f"{i}.up"], looped)
            x = x + matmul(gate / (1 + np.exp(-gate)) * up, w[f"{i}.down"], looped)
        cache.length = start + T
        return matmul(rms_norm(x, w["norm"], c.eps), w["embed"], looped).astype(np.float32)

    def _attend(self, q, cache, layer, end):
        """Causal grouped-query attention of the T new queries over the cache's first `end` positions."""
        c = self.cfg
        T = q.shape[1]
        keys = np.repeat(cache.k[layer, :, :end], c.n_heads // c.n_kv_heads, axis=0)
        values = np.repeat(cache.v[layer, :, :end], c.n_heads // c.n_kv_heads, axis=0)
        scores = q @ keys.transpose(0, 2, 1) / np.float32(np.sqrt(c.head_dim))
        future = np.arange(end)[None, :] > np.arange(end - T, end)[:, None]
        scores = np.where(future, np.float32(-np.inf), scores)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        return (weights @ values).transpose(1, 0, 2).reshape(T, c.n_heads * c.head_dim)

    def greedy(self, prompt_ids, n, cache=None):
        """n tokens by plain greedy decoding, one forward each; `cache` may already hold a prefix of the prompt."""
        cache = self.new_cache() if cache is None else cache
        context = [int(t) for t in prompt_ids]
        for _ in range(n):
            context.append(int(np.argmax(self.forward(context[cache.length:], cache)[-1])))
        return context[len(prompt_ids):]


def tiny(seed=0, cfg=Config()):
    """A TinyLlama with random weights drawn from `seed`, scaled so its distributions are neither flat
    nor one-hot (the accept rule is then exercised on both kept and rejected drafts)."""
    rng = np.random.default_rng(seed)
    q, kv = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    shapes = {"embed": (cfg.vocab, cfg.d_model), "norm": None}
    for i in range(cfg.n_layers):
        shapes |= {f"{i}.attn_norm": None, f"{i}.ffn_norm": None, f"{i}.q": (q, cfg.d_model),
                   f"{i}.k": (kv, cfg.d_model), f"{i}.v": (kv, cfg.d_model), f"{i}.o": (cfg.d_model, q),
                   f"{i}.gate": (cfg.d_ff, cfg.d_model), f"{i}.up": (cfg.d_ff, cfg.d_model),
                   f"{i}.down": (cfg.d_model, cfg.d_ff)}
    w = {}
    for name, shape in shapes.items():
        if shape is None:
            w[name] = np.ones(cfg.d_model, np.float32)
        else:
            w[name] = (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32)
    w["embed"] *= np.float32(2.0)
    for a in w.values():  # a test computes its expected values with the model it hands the exercise
        a.flags.writeable = False
    return TinyLlama(w, cfg)
