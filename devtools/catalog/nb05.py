"""Wrong and right answers for 05_k_sweep's exercises (see devtools/catalog/__init__.py)."""
AID = "05_k_sweep"

CATALOG = {
    "measure": {
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
    "tempered": {
        "wrong": {
            "p ** T instead of p ** (1 / T)": '''
def tempered(P, T):
    e = P ** T
    return e / e.sum(axis=1, keepdims=True)
''',
            "exp(p / T) instead of exp(log(p) / T)": '''
def tempered(P, T):
    e = np.exp(P / T)
    return e / e.sum(axis=1, keepdims=True)
''',
            "not normalised": '''
def tempered(P, T):
    return np.exp(np.log(P) / T)
''',
            "log(p) * T": '''
def tempered(P, T):
    e = np.exp(np.log(P) * T)
    return e / e.sum(axis=1, keepdims=True)
''',
            "normalised down the columns": '''
def tempered(P, T):
    e = np.exp(np.log(P) / T)
    return e / e.sum(axis=0, keepdims=True)
''',
            "normalised over the whole table": '''
def tempered(P, T):
    e = np.exp(np.log(P) / T)
    return e / e.sum()
''',
        },
        "right": {
            "p ** (1 / T), normalised by row": '''
def tempered(P, T):
    e = np.asarray(P, dtype=float) ** (1.0 / T)
    return e / e.sum(axis=1, keepdims=True)
''',
            "softmax without subtracting the max": '''
def tempered(P, T):
    e = np.exp(np.log(P) / T)
    return e / e.sum(axis=1)[:, None]
''',
            "row by row in a loop, clipped": '''
def tempered(P, T):
    rows = []
    for p in P:
        w = np.exp(np.log(np.clip(p, 1e-12, None)) / T)
        rows.append(w / w.sum())
    return np.array(rows)
''',
        },
    },
    "wasted_drafts": {
        "wrong": {
            "k - tokens (the target's own token counted as a draft)": '''
def wasted_drafts(tokens_per_call, k):
    return k - tokens_per_call
''',
            "the kept drafts instead of the wasted ones": '''
def wasted_drafts(tokens_per_call, k):
    return tokens_per_call - 1
''',
            "a fraction of k instead of a count": '''
def wasted_drafts(tokens_per_call, k):
    return (k - tokens_per_call + 1) / k
''',
        },
        "right": {
            "k + 1 - tokens": '''
def wasted_drafts(tokens_per_call, k):
    return k + 1 - tokens_per_call
''',
            "k minus kept drafts": '''
def wasted_drafts(tokens_per_call, k):
    kept = tokens_per_call - 1
    return k - kept
''',
        },
    },
}
