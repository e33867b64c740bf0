"""Notebook 10's trained transformers, measured as the notebook measures them but longer: CPU time
(time.process_time), one BLAS thread, every configuration in each of REPEAT interleaved passes, the
median and the middle half printed. Forward time against block size and c; speedup predicted from
notebook 05's formula (measured alpha, c, t(k+1)/t(1)) beside the measured one; where a token's time
goes; adaptive k against fixed k on SEEDS seeds (tokens per call: a count, not a timing); cross-entropy
of the models against the Kneser-Ney baselines tiny_models.json records.
"""
import numpy as np

from speclab import realspec
from speclab import transformer as tf
from speclab.costs import expected_tokens

REPEAT = 9
N = 40
SEEDS = range(40)
PROMPT = tf.encode("    def add_argument(self, *args, **kwargs):\n        ")
K_SEP, K_SELF = [1, 2, 3, 4, 6, 8], [1, 2, 3, 4]


def _ms(values):
    mid, lo, hi = realspec.spread(np.asarray(values) * 1e3)
    return f"{mid:.3f} ms ({lo:.3f}-{hi:.3f})"


def forwards(target, draft, self_draft):
    sizes = list(range(1, 10))
    fwd = realspec.forward_times({"target": target, "sep": draft, "self": self_draft, "hollow": tf.hollow(target)},
                                 sizes, repeat=31)
    rows = [("target t(1), median (middle half) of 31", _ms(fwd["target", 1])),
            ("hollow target (same calls, d = 3) t(1)", _ms(fwd["hollow", 1]))]
    ratio = {n: realspec.spread(fwd["target", n] / fwd["target", 1])[0] for n in sizes}
    rows.append(("target t(n)/t(1) for n = 1..9", " ".join(f"{ratio[n]:.2f}" for n in sizes)))
    c = {label: realspec.spread(fwd[label, 1] / fwd["target", 1]) for label in ("sep", "self")}
    for label in c:
        rows.append((f"c of the {dict(sep='separate', self='self')[label]} draft, median (middle half)", "{:.3f} ({:.3f}-{:.3f})".format(*c[label])))
    return rows, ratio, {k: v[0] for k, v in c.items()}


def speed(target, draft, self_draft, ratio, c):
    configs = {("sep", k): (draft, k) for k in K_SEP} | {("self", k): (self_draft, k) for k in K_SELF}
    gen = realspec.generation_times(target, configs, PROMPT, N, repeat=REPEAT)
    code = realspec.held_out("code", 1024)
    alpha = {"sep": realspec.acceptance_by_position(target, draft, code).mean(),
             "self": realspec.acceptance_by_position(target, self_draft, code).mean()}
    rows = [("alpha on held-out code: separate, self", f"{alpha['sep']:.3f}, {alpha['self']:.3f}"),
            (f"plain decoding, {N} tokens", _ms([t.seconds for t in gen["plain"]]))]
    for (which, k) in configs:
        per_call = np.mean([t.run.tokens_per_call for t in gen[which, k]])
        pred = expected_tokens(alpha[which], k) / (k * c[which] + ratio[k + 1])
        pred_runs = per_call / (k * c[which] + ratio[k + 1])
        mid, lo, hi = realspec.spread(realspec.speedups(gen, (which, k)))
        rows.append((f"{which} k = {k}: predicted (with runs' tokens/call) | measured",
                     f"{pred:.2f}x ({pred_runs:.2f}x) | {mid:.2f}x ({lo:.2f}-{hi:.2f})"))
    for key in ("plain", ("sep", 3), ("self", 3)):
        parts = [np.median([getattr(t, p) for t in gen[key]]) / N * 1e3 for p in ("target_seconds", "draft_seconds", "outside")]
        rows.append((f"{key}: ms per token in target, draft, outside the forwards",
                     " ".join(f"{x:.3f}" for x in parts) + f"  ({parts[2] / sum(parts):.0%} outside)"))
    return rows


def adaptive(target, draft):
    """Tokens per call of confident_draft (k_max 8, threshold 0.3) minus the fixed-k line at the same mean length."""
    gains = []
    for seed in SEEDS:
        per = {}
        for label, k in (("adaptive", realspec.confident_block(8, 0.3)), (1, 1), (2, 2), (3, 3)):
            run = realspec.Run([])
            realspec.speculative_generate(target, draft, PROMPT, N, k, np.random.default_rng(seed), run)
            per[label] = run
        m = np.mean(per["adaptive"].drafted)
        gains.append(per["adaptive"].tokens_per_call - np.interp(m, [1, 2, 3], [per[k].tokens_per_call for k in (1, 2, 3)]))
    g = np.array(gains)
    return [(f"adaptive minus fixed k at the same length, tokens/call ({len(g)} seeds)",
             f"{g.mean():+.3f} +- {g.std(ddof=1) / np.sqrt(len(g)):.3f} (s.e.); {np.sum(g > 0)} of {len(g)} seeds positive")]


def cross_entropies(target, draft):
    base = tf.info().get("baselines", {}).get("nats_per_character", {})
    rows = []
    for label, model in (("target", target), ("target layer 1", target.exit_at(1)), ("draft", draft)):
        ce = {t: realspec.cross_entropy(model, realspec.held_out(t, 2048)) for t in ("code", "prose")}
        rows.append((f"{label}: nats/char on held-out code, prose", f"{ce['code']:.3f} {ce['prose']:.3f}"))
    for name in ("kn3", "kn5"):
        if name in base:
            rows.append((f"Kneser-Ney {name[2]}-gram (tiny_models.json): code, prose",
                         f"{base[name]['code']:.3f} {base[name]['prose']:.3f}"))
    return rows


def bench():
    target, draft = tf.load("target"), tf.load("draft")
    self_draft = target.exit_at(1)
    rows, ratio, c = forwards(target, draft, self_draft)
    yield from rows
    yield from speed(target, draft, self_draft, ratio, c)
    yield from adaptive(target, draft)
    yield from cross_entropies(target, draft)


if __name__ == "__main__":
    from devtools.bench import print_rows
    print_rows(bench())
