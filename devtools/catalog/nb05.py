"""Wrong, right and delegating answers for 05_k_sweep's exercises (see devtools/catalog/__init__.py)."""
AID = "05_k_sweep"

CATALOG = {
    "measure": {
        "delegate": {
            "speclab.sweeps' plain loop under another name": '''
from speclab.sweeps import measure as _m
def measure(P, Q, k, rounds, rng, ctx=0):
    return _m(P, Q, k, rounds, rng, ctx, fast=False)
''',
            "the sweeps module's run_rounds through an attribute": '''
import speclab.sweeps as sw
def measure(P, Q, k, rounds, rng, ctx=0):
    kept, emitted = sw.run_rounds(P, Q, k, rounds, rng, ctx)
    return kept / (rounds * k), emitted / rounds
''',
        },
        "wrong": {
            "tokens per call counts only the kept drafts (off by one)": ('''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = 0
    t = ctx
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        kept += len(out) - 1
        t = out[-1]
    return kept / (rounds * k), kept / rounds
''', 'adds the bonus'),
            "counts one token too many per round": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    t = ctx
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        kept += len(out) - 1
        emitted += len(out) + 1
        t = out[-1]
    return kept / (rounds * k), emitted / rounds
''',
            "kept drafts counted as len(out)": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    t = ctx
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        kept += len(out)
        emitted += len(out)
        t = out[-1]
    return kept / (rounds * k), emitted / rounds
''',
            "accept rate divided by rounds only": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    t = ctx
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        kept += len(out) - 1
        emitted += len(out)
        t = out[-1]
    return kept / rounds, emitted / rounds
''',
            "every round restarts from ctx": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    for _ in range(rounds):
        out = verify_round(P, Q, ctx, draft_tokens(Q, ctx, k, rng), rng)
        kept += len(out) - 1
        emitted += len(out)
    return kept / (rounds * k), emitted / rounds
''',
            "continues from the first emitted token": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    t = ctx
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        kept += len(out) - 1
        emitted += len(out)
        t = out[0]
    return kept / (rounds * k), emitted / rounds
''',
            "one draft reused for every round": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    t = ctx
    drafted = draft_tokens(Q, t, k, rng)
    for _ in range(rounds):
        out = verify_round(P, Q, t, drafted, rng)
        kept += len(out) - 1
        emitted += len(out)
        t = out[-1]
    return kept / (rounds * k), emitted / rounds
''',
        },
        "right": {
            "kept = k if len(out) == k + 1 else len(out) - 1": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    kept = emitted = 0
    t = ctx
    for _ in range(rounds):
        drafted = draft_tokens(Q, t, k, rng)
        out = verify_round(P, Q, t, drafted, rng)
        kept += k if len(out) == k + 1 else len(out) - 1
        emitted += len(out)
        t = out[-1]
    return kept / (rounds * k), emitted / rounds
''',
            "lengths collected in a numpy array": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    lengths = np.zeros(rounds)
    t = ctx
    for r in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        lengths[r] = len(out)
        t = out[-1]
    return float(np.sum(np.minimum(lengths - 1, k)) / (rounds * k)), float(lengths.mean())
''',
            "a while loop over the emitted tokens": '''
def measure(P, Q, k, rounds, rng, ctx=0):
    tokens, done, t = [], 0, ctx
    while done < rounds:
        drafted = draft_tokens(Q, t, k, rng)
        out = verify_round(P, Q, t, drafted, rng)
        tokens.append(len(out))
        t = out[-1]
        done += 1
    return (sum(tokens) - rounds) / (rounds * k), sum(tokens) / rounds
''',
        },
    },
    "expected_tokens": {
        "delegate": {
            "the course's expected_tokens under another name": '''
from speclab.costs import expected_tokens as _et
def expected_tokens(a, k):
    return _et(a, k)
''',
            "notebook 07's hardware module, which imports it": '''
from speclab import hardware
def expected_tokens(a, k):
    return hardware.expected_tokens(a, k)
''',
        },
        "wrong": {
            "exponent k instead of k + 1": ('''
def expected_tokens(a, k):
    if a == 1:
        return float(k)
    return (1 - a ** k) / (1 - a)
''', 'the exponent in the formula is k + 1'),
            "exponent k + 2": '''
def expected_tokens(a, k):
    if a == 1:
        return float(k + 2)
    return (1 - a ** (k + 2)) / (1 - a)
''',
            "no a = 1 branch (division by zero)": ('''
def expected_tokens(a, k):
    return (1 - a ** (k + 1)) / (1 - a)
''', 'at a = 1 the formula is 0/0'),
            "numpy division gives nan at a = 1": '''
def expected_tokens(a, k):
    a = np.float64(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 - a ** (k + 1)) / (1 - a)
''',
            "k at a = 1 (forgets the bonus token)": '''
def expected_tokens(a, k):
    if a == 1:
        return float(k)
    return (1 - a ** (k + 1)) / (1 - a)
''',
            "series without the target's own token": '''
def expected_tokens(a, k):
    return sum(a ** j for j in range(1, k + 1))
''',
            "series stops at a^(k-1)": '''
def expected_tokens(a, k):
    return sum(a ** j for j in range(k))
''',
            "a^k * (k + 1): the chance all k survive, times the round's maximum": '''
def expected_tokens(a, k):
    return a ** k * (k + 1)
''',
        },
        "right": {
            "closed form with an exact a == 1 branch": '''
def expected_tokens(a, k):
    if a == 1:
        return float(k + 1)
    return (1 - a ** (k + 1)) / (1 - a)
''',
            "series 1 + a + ... + a^k": '''
def expected_tokens(a, k):
    return sum(a ** j for j in range(k + 1))
''',
            "running term loop": '''
def expected_tokens(a, k):
    total, term = 0.0, 1.0
    for _ in range(k + 1):
        total += term
        term *= a
    return total
''',
            "tolerance-based a == 1 branch": '''
def expected_tokens(a, k):
    if abs(1.0 - a) < 1e-12:
        return k + 1
    return (1.0 - a ** (k + 1)) / (1.0 - a)
''',
            "vectorised with np.where": '''
def expected_tokens(a, k):
    a = np.asarray(a, dtype=float)
    one = np.isclose(a, 1.0, rtol=0, atol=1e-12)
    safe = np.where(one, 0.0, a)
    return np.where(one, k + 1.0, (1 - safe ** (k + 1)) / (1 - safe))
''',
            "vectorised series with np.arange": '''
def expected_tokens(a, k):
    return float(np.sum(float(a) ** np.arange(k + 1)))
''',
        },
    },
    "speedup": {
        "delegate": {
            "the course's speedup through a module attribute": '''
import speclab.costs as cc
def speedup(tokens_per_call, k, c):
    return cc.speedup(tokens_per_call, k, c)
''',
        },
        "wrong": {
            "speedup without k: tokens / (1 + c)": ('''
def speedup(tokens_per_call, k, c):
    return tokens_per_call / (1 + c)
''', '1 + 4 * 0.1'),
            "forgets the target call: tokens / (k * c)": '''
def speedup(tokens_per_call, k, c):
    return tokens_per_call / (k * c) if k * c else tokens_per_call
''',
            "multiplies by the cost": '''
def speedup(tokens_per_call, k, c):
    return tokens_per_call * (1 + k * c)
''',
            "counts only the kept drafts": '''
def speedup(tokens_per_call, k, c):
    return (tokens_per_call - 1) / (1 + k * c)
''',
            "prices k + 1 draft calls": '''
def speedup(tokens_per_call, k, c):
    return tokens_per_call / (1 + (k + 1) * c)
''',
        },
        "right": {
            "tokens / (1 + k c)": '''
def speedup(tokens_per_call, k, c):
    return tokens_per_call / (1 + k * c)
''',
            "numpy divide": '''
def speedup(tokens_per_call, k, c):
    return float(np.divide(tokens_per_call, 1.0 + np.multiply(k, c)))
''',
        },
    },
    "best_k": {
        "delegate": {
            "costs.best_k under another name": '''
from speclab.costs import best_k as _best
def best_k(a, c, k_max):
    return _best(a, c, k_max)
''',
            "notebook 06's best_speedup from the costs module, first element": '''
from speclab import costs
def best_k(a, c, k_max):
    return costs.best_speedup(a, c, k_max)[0]
''',
        },
        "wrong": {
            "returns the best speedup, not k": ('''
def best_k(a, c, k_max):
    return max(speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1))
''', 'not the speedup itself'),
            "returns a 0-based index": ('''
def best_k(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    return int(np.argmax(gains))
''', 'counted from 1'),
            "searches 1..k_max - 1": '''
def best_k(a, c, k_max):
    ks = list(range(1, k_max)) or [1]
    return max(ks, key=lambda k: speedup(expected_tokens(a, k), k, c))
''',
            "searches from k = 0": '''
def best_k(a, c, k_max):
    return max(range(0, k_max + 1), key=lambda k: speedup(expected_tokens(a, k), k, c))
''',
            "maximises tokens per call, ignoring the draft cost": '''
def best_k(a, c, k_max):
    return max(range(1, k_max + 1), key=lambda k: expected_tokens(a, k))
''',
            "the last maximum on a tie (>= in the loop)": ('''
def best_k(a, c, k_max):
    best, best_gain = 1, -1.0
    for k in range(1, k_max + 1):
        g = speedup(expected_tokens(a, k), k, c)
        if g >= best_gain:
            best, best_gain = k, g
    return best
''', 'on an exact tie return the smaller k'),
            "k returned as a float": ('''
def best_k(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    return float(np.argmax(gains) + 1)
''', 'as an integer'),
            "index into the wrong list: argmax + 2": '''
def best_k(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    return min(int(np.argmax(gains)) + 2, k_max)
''',
        },
        "right": {
            "argmax + 1": '''
def best_k(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    return int(np.argmax(gains)) + 1
''',
            "loop keeping the best": '''
def best_k(a, c, k_max):
    best, best_gain = 1, -1.0
    for k in range(1, k_max + 1):
        g = expected_tokens(a, k) / (1 + k * c)
        if g > best_gain:
            best, best_gain = k, g
    return best
''',
            "vectorised over k": '''
def best_k(a, c, k_max):
    ks = np.arange(1, k_max + 1)
    tokens = np.array([sum(a ** j for j in range(k + 1)) for k in ks])
    return int(ks[np.argmax(tokens / (1 + ks * c))])
''',
        },
    },
    "streak_tokens": {
        "wrong": {
            "the i.i.d. formula at the weighted mean beta (the assumption not broken)": ('''
def streak_tokens(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return expected_tokens(alpha, k)
''', 'do not average the betas first'),
            "ignores the weights: a plain mean over contexts": '''
def streak_tokens(betas, weights, k):
    return sum(expected_tokens(b, k) for b in betas) / len(betas)
''',
            "forgets the target's own token (kept drafts only)": '''
def streak_tokens(betas, weights, k):
    return sum(w * (expected_tokens(b, k) - 1) for b, w in zip(betas, weights))
''',
            "chance of keeping all k drafts times k + 1": '''
def streak_tokens(betas, weights, k):
    return sum(w * b ** k * (k + 1) for b, w in zip(betas, weights))
''',
            "series stops at beta^(k-1)": '''
def streak_tokens(betas, weights, k):
    return sum(w * sum(b ** j for j in range(k)) for b, w in zip(betas, weights))
''',
            "vectorised closed form with no beta = 1 branch (nan)": '''
def streak_tokens(betas, weights, k):
    b, w = np.asarray(betas, dtype=float), np.asarray(weights, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(w * (1 - b ** (k + 1)) / (1 - b)))
''',
            "the start context's beta for the first draft, alpha after it": '''
def streak_tokens(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return sum(w * (1 + b * expected_tokens(alpha, k - 1)) for b, w in zip(betas, weights))
''',
        },
        "right": {
            "weighted sum of expected_tokens": '''
def streak_tokens(betas, weights, k):
    return sum(w * expected_tokens(b, k) for b, w in zip(betas, weights))
''',
            "double loop over contexts and kept drafts": '''
def streak_tokens(betas, weights, k):
    total = 0.0
    for b, w in zip(betas, weights):
        for j in range(k + 1):
            total += w * b ** j
    return total
''',
            "vectorised: weights @ (beta ** j) summed over j": '''
def streak_tokens(betas, weights, k):
    b, w = np.asarray(betas, dtype=float), np.asarray(weights, dtype=float)
    return float(w @ (b[:, None] ** np.arange(k + 1)).sum(axis=1))
''',
            "E[N] = sum over j of P(N >= j), each a weighted mean of beta^j": '''
def streak_tokens(betas, weights, k):
    return 1 + sum(sum(w * b ** j for b, w in zip(betas, weights)) for j in range(1, k + 1))
''',
        },
        "delegate": {
            "the course's expected_tokens from speclab.costs under another name": '''
from speclab.costs import expected_tokens as _tokens
def streak_tokens(betas, weights, k):
    return sum(w * _tokens(b, k) for b, w in zip(betas, weights))
''',
            "notebook 07's module, which re-exports expected_tokens": '''
import speclab.hardware as hw
def streak_tokens(betas, weights, k):
    return float(np.dot(weights, [hw.expected_tokens(b, k) for b in betas]))
''',
        },
    },
    "formula_gap": {
        "wrong": {
            "alpha as the plain mean of the betas": ('''
def formula_gap(betas, weights, k):
    alpha = sum(betas) / len(betas)
    return streak_tokens(betas, weights, k) - expected_tokens(alpha, k)
''', 'not the plain mean of the betas'),
            "sign flipped: formula minus pair": '''
def formula_gap(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return expected_tokens(alpha, k) - streak_tokens(betas, weights, k)
''',
            "a ratio instead of a difference in tokens": '''
def formula_gap(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return streak_tokens(betas, weights, k) / expected_tokens(alpha, k) - 1
''',
            "the formula with k + 1 drafts": '''
def formula_gap(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return streak_tokens(betas, weights, k) - expected_tokens(alpha, k + 1)
''',
            "feeds the formula the best context's beta": '''
def formula_gap(betas, weights, k):
    return streak_tokens(betas, weights, k) - expected_tokens(max(betas), k)
''',
        },
        "right": {
            "streak_tokens minus expected_tokens at the weighted mean": '''
def formula_gap(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return streak_tokens(betas, weights, k) - expected_tokens(alpha, k)
''',
            "numpy dot for alpha": '''
def formula_gap(betas, weights, k):
    alpha = float(np.dot(np.asarray(weights, dtype=float), np.asarray(betas, dtype=float)))
    return float(streak_tokens(betas, weights, k) - expected_tokens(alpha, k))
''',
            "the gap as a sum over j of mean(beta^j) - alpha^j": '''
def formula_gap(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return sum(sum(w * b ** j for b, w in zip(betas, weights)) - alpha ** j for j in range(1, k + 1))
''',
        },
        "delegate": {
            "the course's expected_tokens reached through the speclab package": '''
import speclab.costs
def formula_gap(betas, weights, k):
    alpha = sum(b * w for b, w in zip(betas, weights))
    return streak_tokens(betas, weights, k) - speclab.costs.expected_tokens(alpha, k)
''',
        },
    },
}
