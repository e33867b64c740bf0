"""Notebook 07's deployment priced by the learner's own functions: its demo cells and its widget.

Every function here takes the learner's weight_bytes, forward_macs or step_time (the notebook hands
in its own) and uses it once it is solved, the course's (speclab.speed.hardware) until then:
speclab.plumbing.pending.learner_first. A blank student copy so shows the course's numbers, a solved
one the learner's own, and the notebook never names the course's reference. In a kernel grading 07
the course's raise NotImplementedError (grading/kernels/hidden.py), so there a demo of an unsolved
exercise ends in needs' one line; with the learner's solved it needs none of them.

deployment() is everything the widget (speclab.views.figures.nb07) shows, over every batch that fits.
"""
import numpy as np

from . import hardware as hw
from .costs import DRAFT_STEP_OVERHEAD_S, draft_cost, expected_tokens
from ..plumbing.pending import learner_first

BATCHES = np.arange(1, 4097)   # every whole batch the widget considers


def round_times(target, draft, acc, k, ctx, step, batch=1, overhead=0.0):
    """hardware.round_times, each pass priced by the learner's `step` (step_time's signature)."""
    return hw.round_times(target, draft, acc, k, ctx, batch, learner_first(step, hw.step_time), overhead)


def crossover_batch(cfg, acc, n_tokens, weights, macs):
    """hardware.crossover_batch with the learner's `weights` and `macs` (weight_bytes, forward_macs)."""
    return hw.crossover_batch(cfg, acc, n_tokens, learner_first(weights, hw.weight_bytes),
                              learner_first(macs, hw.forward_macs))


def kernel_times(cfg, acc, n_tokens, ctx, batch, step):
    """(weight matmuls, attention) in seconds, from the learner's `step`: with no cache a pass is its
    matmuls alone, and attention is what the cache adds (hardware.kernel_times, by subtraction)."""
    step = learner_first(step, hw.step_time)
    matmuls = step(cfg, acc, n_tokens, 0, batch)
    return matmuls, step(cfg, acc, n_tokens, ctx, batch) - matmuls


def step_curve(step, cfg, acc, n_tokens, ctx, batches):
    """The learner's `step` at every batch in `batches`, one call each; the course's in one numpy pass
    (hardware.step_times) when `step` is the course's or still unsolved."""
    def at_once():
        return hw.step_times(cfg, acc, n_tokens, ctx, batches)

    def each():   # an unsolved step raises at its first call: one exception, then numpy
        return np.array([step(cfg, acc, n_tokens, ctx, int(b)) for b in batches], dtype=float)
    return at_once() if step is hw.step_time else learner_first(each, at_once)()


def at_batch(chip="H100", context=1024, batch=1, k=4, overhead_ms=1e3 * DRAFT_STEP_OVERHEAD_S, cards=4,
             models=("llama-3-70b", "llama-3.2-1b"), step=hw.step_time, weights=hw.weight_bytes):
    """What the deployment widget shows at one batch, without the curves over every batch (deployment): one
    round's step times in ms ("plain_ms", "draft_bytes_ms", "draft_ms" with the overhead, "verify_ms") and
    the memory in GB ("memory_gb" this batch needs, "capacity_gb", "weights_gb")."""
    target, draft = hw.load_model(models[0]), hw.load_model(models[1])
    acc = hw.accelerator(chip, cards=cards)
    weights = learner_first(weights, hw.weight_bytes)
    plain, d_bytes, verify = round_times(target, draft, acc, k, context, step, batch)
    return {"plain_ms": float(1e3 * plain), "draft_bytes_ms": float(1e3 * d_bytes),
            "draft_ms": float(1e3 * (d_bytes + overhead_ms * 1e-3)), "overhead_ms": float(overhead_ms),
            "verify_ms": float(1e3 * verify), "accelerator": acc["name"],
            "memory_gb": hw.deployment_bytes(target, draft, batch, context, weights) / 1e9,
            "capacity_gb": acc["memory"] / 1e9, "weights_gb": (weights(target) + weights(draft)) / 1e9}


def deployment(chip="H100", context=1024, batch=1, k=4, a=0.8, overhead_ms=1e3 * DRAFT_STEP_OVERHEAD_S,
               cards=4, models=("llama-3-70b", "llama-3.2-1b"), step=hw.step_time, weights=hw.weight_bytes,
               curves=None):
    """Everything the deployment widget shows, as numbers, over every batch 1..4096 that fits.

    `chip` is a key of load_accelerators() ("A100", "H100", "H200"); the deployment pools `cards` of it.
    Every pass is priced by `step` and the weights counted by `weights`, the learner's once solved.
    `curves`, a dict kept between calls (a widget's), keeps the step times over the batches, so a move
    that changes neither the chip, the context nor k recomputes none.

    Returns a dict: at_batch's numbers at `batch`; "speedup" with the realistic draft and "ideal_speedup"
    with the ideal one (None where the batch does not fit), "fits", "max_batch", "slower_batch" (the
    smallest batch that fits and is slower than plain decoding, else None), "tokens_per_round", and the
    curves over "batches" (those that fit): "speedup_curve", "ideal_curve".
    """
    target, draft = hw.load_model(models[0]), hw.load_model(models[1])
    acc = hw.accelerator(chip, cards=cards)
    weights = learner_first(weights, hw.weight_bytes)
    overhead = overhead_ms * 1e-3
    tokens = expected_tokens(a, k)
    cap = hw.max_batch(target, draft, acc, context, weights)
    batches = BATCHES[:min(cap, len(BATCHES))]
    curves = {} if curves is None else curves

    def curve(cfg, n):
        key = (step, cfg["name"], acc["name"], n, context, len(batches))
        if key not in curves:
            curves[key] = step_curve(step, cfg, acc, n, context, batches)
        return curves[key]
    plain, d_bytes, verify = curve(target, 1), curve(draft, 1), curve(target, k + 1)
    speed = tokens / (k * draft_cost(d_bytes, plain, overhead) + verify / plain)
    ideal = tokens / (k * draft_cost(d_bytes, plain, 0.0) + verify / plain)
    slow = np.flatnonzero(tokens * plain < k * (d_bytes + overhead) + verify)
    fits = batch <= cap
    i = batch - 1
    return {**at_batch(chip, context, batch, k, overhead_ms, cards, models, step, weights),
            "tokens_per_round": float(tokens), "speedup": float(speed[i]) if fits else None,
            "ideal_speedup": float(ideal[i]) if fits else None, "fits": bool(fits), "max_batch": cap,
            "slower_batch": int(batches[slow[0]]) if len(slow) else None,
            "batches": batches, "speedup_curve": speed, "ideal_curve": ideal}
