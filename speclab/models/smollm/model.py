"""SmolLM2-135M's forward pass in NumPy (Llama architecture), float32, with a KV cache.

One call takes T new tokens and returns their next-token logits; the cache holds every earlier
position's keys and values, so decoding one token and verifying k + 1 drafted ones are the same call.
Weights are stored (in, out): `x @ W`. Two ways to apply a weight matrix to T rows (`looped`):
  naive   x @ W, one BLAS call. For T >= 2 OpenBLAS switches from a matrix-vector product to a matrix
          multiply that first repacks the whole matrix: 2-9 rows cost about 3x one row.
  looped  one matrix-vector product per row. The first row reads W from memory, the next ones find it
          in cache (the head, too large for any cache, goes block by block): this is the kernel that
          makes "k + 1 tokens for about the price of one" true here.
Time it with one BLAS thread (threadpoolctl.threadpool_limits(1), called once numpy is imported): with
two on two shared cores the idle one spins, and a greedy decode measured 10x more CPU time.
Rotary embeddings rotate ADJACENT pairs (0, 1), (2, 3), ...: llama.cpp's converter permuted the rows of
Q and K into that order, so the rotate-half form (pairs i, i + 64/2) is wrong on these weights.
"""
from dataclasses import dataclass, fields, replace

import numpy as np


@dataclass(frozen=True)
class Config:
    n_layers: int = 30
    d_model: int = 576
    n_heads: int = 9
    n_kv_heads: int = 3
    head_dim: int = 64
    d_ff: int = 1536
    vocab: int = 49152
    rope_base: float = 1e5
    eps: float = 1e-5

    @classmethod
    def from_dict(cls, d):
        return cls(**{f.name: d[f.name] for f in fields(cls)})


class KVCache:
    """Keys and values of the positions seen so far, per layer: (n_kv_heads, capacity, head_dim) each.
    Rolling back a rejected draft is `truncate(n)`: the positions past n are simply overwritten later."""

    def __init__(self, config, capacity=256):
        self.config, self.length = config, 0
        shape = (config.n_layers, 2, config.n_kv_heads, capacity, config.head_dim)
        self.kv = np.zeros(shape, dtype=np.float32)

    @property
    def capacity(self):
        return self.kv.shape[3]

    def reserve(self, n):
        if n > self.capacity:
            grown = np.zeros(self.kv.shape[:3] + (max(n, 2 * self.capacity),) + self.kv.shape[4:], np.float32)
            grown[:, :, :, :self.length] = self.kv[:, :, :, :self.length]
            self.kv = grown

    def truncate(self, n):
        """Forget every position from n on (a rejected draft's keys and values)."""
        if not 0 <= n <= self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {n}")
        self.length = n

    def copy(self):
        other = KVCache.__new__(KVCache)
        other.config, other.length, other.kv = self.config, self.length, self.kv.copy()
        return other


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def silu(x):
    return x * 0.5 * (1 + np.tanh(0.5 * x))  # x * sigmoid(x), without exp's overflow for large -x


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# A matrix larger than this (only the 113 MB output head) would be read from memory again for every row:
# the loop takes it a block of 256 columns (0.6 MB) at a time. Head for 5 rows: 26 ms blocked, 82 ms row by
# row, 33 ms naive, 15 ms for one row (CPU, one thread, this machine under load).
CACHED_BYTES = 4 * 2 ** 20
BLOCK_COLUMNS = 256


def apply(x, W, looped):
    """x (T, in) @ W (in, out): one BLAS matrix multiply, or one matrix-vector product per row."""
    if not looped or len(x) == 1:
        return x @ W
    out = np.empty((len(x), W.shape[1]), dtype=np.float32)
    step = W.shape[1] if W.nbytes <= CACHED_BYTES else BLOCK_COLUMNS
    for j in range(0, W.shape[1], step):
        block = W[:, j:j + step]
        for i, row in enumerate(x):
            np.matmul(row, block, out=out[i, j:j + step])
    return out


class Model:
    """The Llama forward over `weights` ({name: array} in the cache's layout; see cache.py)."""

    def __init__(self, config, weights):
        self.config, self.w = config, weights
        for f in fields(config):
            setattr(self, f.name, getattr(config, f.name))
        self.bytes_per_token = sum(a.nbytes for name, a in weights.items()   # the head reads all of token_embd
                                   if not name.startswith("blk.") or int(name.split(".")[1]) < self.n_layers)
        i = np.arange(self.head_dim // 2)
        self.inv_freq = (self.rope_base ** (-2 * i / self.head_dim)).astype(np.float32)

    def new_cache(self, capacity=256):
        return KVCache(self.config, capacity)

    def rope(self, x, pos):
        """Rotate each adjacent pair (2i, 2i + 1) of every head by pos * base^(-2i / head_dim).
        x: (T, heads, head_dim); pos: (T,)."""
        angle = pos[:, None, None] * self.inv_freq  # (T, 1, head_dim / 2)
        cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def attention(self, q, keys, values, start):
        """Causal attention of T queries at positions start.. over the cache's first start + T positions.
        Query heads share key/value heads in consecutive groups (grouped-query attention)."""
        T, H, hd = q.shape
        g = H // self.n_kv_heads
        q = q.reshape(T, self.n_kv_heads, g, hd).transpose(1, 2, 0, 3)  # (kv_heads, g, T, hd)
        scores = q @ keys[:, None].swapaxes(-1, -2) * hd ** -0.5       # (kv_heads, g, T, S); a Python float
        # keeps float32 (np.sqrt(hd) is a float64 scalar, which promotes: 10x slower, the head cast to float64)
        S = keys.shape[1]
        future = np.arange(S)[None, :] > (start + np.arange(T))[:, None]
        scores = np.where(future, -np.inf, scores)
        out = softmax(scores) @ values[:, None]                         # (kv_heads, g, T, hd)
        return out.transpose(2, 0, 1, 3).reshape(T, H * hd)

    def block(self, layer, x, cache, start, looped):
        w, p = self.w, f"blk.{layer}."
        T, pos = len(x), start + np.arange(len(x))
        h = rms_norm(x, w[p + "attn_norm"], self.eps)
        q = self.rope(apply(h, w[p + "attn_q"], looped).reshape(T, self.n_heads, self.head_dim), pos)
        k = self.rope(apply(h, w[p + "attn_k"], looped).reshape(T, self.n_kv_heads, self.head_dim), pos)
        v = apply(h, w[p + "attn_v"], looped).reshape(T, self.n_kv_heads, self.head_dim)
        kv = cache.kv[layer]
        kv[0, :, start:start + T] = k.transpose(1, 0, 2)
        kv[1, :, start:start + T] = v.transpose(1, 0, 2)
        att = self.attention(q, kv[0, :, :start + T], kv[1, :, :start + T], start)
        x = x + apply(att, w[p + "attn_output"], looped)
        h = rms_norm(x, w[p + "ffn_norm"], self.eps)
        gate_up = silu(apply(h, w[p + "ffn_gate"], looped)) * apply(h, w[p + "ffn_up"], looped)
        return x + apply(gate_up, w[p + "ffn_down"], looped)

    def embed(self, tokens):
        return np.asarray(self.w["token_embd"][np.asarray(tokens, dtype=np.int64).reshape(-1)], dtype=np.float32)

    def head(self, x, looped=False):
        """Logits from residual states: the final norm, then the tied head (the embedding's transpose)."""
        return apply(rms_norm(x, self.w["output_norm"], self.eps), self.w["token_embd"].T, looped)

    def forward(self, tokens, cache, looped=True):
        """Logits (T, vocab) float32 after each of `tokens`, which extend the cache by T positions. No tokens
        (an empty prefix, as context[:-1] of a one-token context) read nothing: (0, vocab), the cache unchanged."""
        x, start = self.embed(tokens), cache.length
        if len(x) == 0:
            return np.zeros((0, self.w["token_embd"].shape[0]), np.float32)
        cache.reserve(start + len(x))
        for layer in range(self.n_layers):
            x = self.block(layer, x, cache, start, looped)
        cache.length = start + len(x)
        return self.head(x, looped)

    def exit_at(self, layers):
        """Early exit: the same weights, only the first `layers` blocks before the final norm and head (a
        draft with no weights of its own, as LayerSkip's self-draft). Its cache holds `layers` layers."""
        return Model(replace(self.config, n_layers=layers), self.w)

    def greedy(self, prompt_ids, n, cache=None, stop=None):
        """n tokens, each the argmax after the previous ones (ending early after `stop`, if given).
        A cache must hold a prefix of the prompt: only the tokens past it are fed (at least the last one,
        whose logits give the first token). The prompt goes through x @ W: for tens of rows a matrix
        multiply is the faster kernel (42 tokens: 0.33 s against 1.1 s looped); each step is one row."""
        cache = self.new_cache() if cache is None else cache
        cache.truncate(min(cache.length, len(prompt_ids) - 1))
        logits = self.forward(list(prompt_ids)[cache.length:], cache, looped=False)
        out = []
        for _ in range(n):
            out.append(int(np.argmax(logits[-1])))
            if out[-1] == stop or len(out) == n:
                break
            logits = self.forward(out[-1:], cache)
        return out
