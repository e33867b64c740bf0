"""A tiny Llama with random weights: the stand-in notebook 10's graded tests hand the exercises.

It is SmolLM2's own class (speclab.models.smollm.Model: the same forward, KV cache, early exit and greedy
decoding) over a tiny Config and random weights in the same layout, so a forward runs in well under a
millisecond. The grader calls a student's loop hundreds of times; on the real 135M model every test
would cost seconds. What the tests check (one pass equals k + 1 single steps, the cache rolled back,
greedy equality, the accept rule) does not depend on the weights being trained, only on the output
depending on every token in the cache and on its position, which attention and rotary positions give
any random Llama.

    model = tiny(seed=0)
    cache = model.new_cache()
    logits = model.forward([5, 9, 2], cache)      # (3, vocab); cache.length == 3
    cache.truncate(1)                             # forget all but the first token
"""
import numpy as np

from speclab.models.smollm.model import Config, Model

TINY = Config(n_layers=2, d_model=32, n_heads=4, n_kv_heads=2, head_dim=8, d_ff=48, vocab=24, rope_base=1e4)


def shapes(cfg):
    """{name: shape} of a Llama's weights in the layout speclab.models.smollm's forward uses: matrices (in, out),
    the embedding (vocab, d); a vector's shape is (d,)."""
    q, kv = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    out = {"token_embd": (cfg.vocab, cfg.d_model), "output_norm": (cfg.d_model,)}
    for i in range(cfg.n_layers):
        p = f"blk.{i}."
        out |= {p + "attn_norm": (cfg.d_model,), p + "ffn_norm": (cfg.d_model,),
                p + "attn_q": (cfg.d_model, q), p + "attn_k": (cfg.d_model, kv), p + "attn_v": (cfg.d_model, kv),
                p + "attn_output": (q, cfg.d_model), p + "ffn_gate": (cfg.d_model, cfg.d_ff),
                p + "ffn_up": (cfg.d_model, cfg.d_ff), p + "ffn_down": (cfg.d_ff, cfg.d_model)}
    return out


def tiny(seed=0, cfg=TINY):
    """speclab.models.smollm.Model with random weights drawn from `seed`, scaled so its distributions are neither
    flat nor one-hot (the accept rule is then exercised on both kept and rejected drafts). The weights are
    frozen: a test computes its expected values with the very model it hands the exercise."""
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in shapes(cfg).items():
        if len(shape) == 1:   # RMSNorm gains, not all ones: a norm applied to the wrong state shows
            w[name] = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        else:
            fan_in = shape[1] if name == "token_embd" else shape[0]
            w[name] = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    w["token_embd"] *= np.float32(2.0)
    for a in w.values():
        a.flags.writeable = False
    return Model(cfg, w)
