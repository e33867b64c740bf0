"""Wrong, right and delegating answers for 05_k_sweep's exercises (see devtools/catalog/__init__.py).
Long because it is a table: one entry per mistake the grader is held to."""
from devtools.catalog import edit

AID = "05_k_sweep"

CATALOG = {
    "expected_tokens": {
        "delegate": {
            "the course's expected_tokens under another name": '''
from speclab.speed.costs import expected_tokens as _et
def expected_tokens(a, k):
    return _et(a, k)
''',
            "notebook 07's hardware module, which imports it": '''
from speclab.speed import hardware
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
            "k at a = 1 (forgets the bonus token)": edit("return float(k + 1)", "return float(k)"),
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
import speclab.speed.costs as cc
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
from speclab.speed.costs import best_k as _best
def best_k(a, c, k_max):
    return _best(a, c, k_max)
''',
            "notebook 06's best_speedup from the costs module, first element": '''
from speclab.speed import costs
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
    "streaky_bits": {
        "wrong": {
            "independent bits: rho ignored (the assumption not broken)": ("""
def streaky_bits(alpha, rho, n, rng):
    return [1 if rng.random() < alpha else 0 for _ in range(n)]
""", "after a 1 the next is 1 with probability"),
            "the two transition probabilities swapped": edit(
                "stay, enter = alpha + rho * (1 - alpha), alpha * (1 - rho)",
                "enter, stay = alpha + rho * (1 - alpha), alpha * (1 - rho)"),
            "stay-at-1 probability taken as rho itself": edit(
                "stay, enter = alpha + rho * (1 - alpha), alpha * (1 - rho)",
                "stay, enter = rho, alpha * (1 - rho)"),
            "after a 0 the chance of a 1 is alpha * rho": edit(
                "stay, enter = alpha + rho * (1 - alpha), alpha * (1 - rho)",
                "stay, enter = alpha + rho * (1 - alpha), alpha * rho"),
            "the first bit drawn with the after-a-1 probability": edit("bits, prob = [], alpha", "bits, prob = [], stay"),
            "a bit is 1 when the uniform is ABOVE its probability": edit(
                "bit = 1 if rng.random() < prob else 0",
                "bit = 1 if rng.random() > 1 - prob else 0"),
            "one uniform too many (draws the next bit's uniform before the loop ends)": edit(
                ("bits, prob = [], alpha", "bits, prob, u = [], alpha, rng.random()"),
                ("bit = 1 if rng.random() < prob else 0", "bit = 1 if u < prob else 0"),
                ("prob = stay if bit else enter", '''
prob = stay if bit else enter
u = rng.random()
''')),
            "n - 1 bits (the first bit forgotten)": edit("for _ in range(n):", "for _ in range(n - 1):"),
            # The contract says "strictly below", as sample_from does; a test puts uniforms exactly on the thresholds.
            "a bit is 1 when its uniform is below OR EQUAL to its probability": ("""
def streaky_bits(alpha, rho, n, rng):
    bits, prob = [], alpha
    for _ in range(n):
        bits.append(int(rng.random() <= prob))
        prob = alpha + rho * (1 - alpha) if bits[-1] else alpha * (1 - rho)
    return bits
""", 'strictly below its probability'),
        },
        "right": {
            "transition table indexed by the previous bit, NumPy array out": """
def streaky_bits(alpha, rho, n, rng):
    to_one = [alpha * (1 - rho), rho + (1 - rho) * alpha]
    out = np.zeros(n, dtype=int)
    out[0] = rng.random() < alpha
    for i in range(1, n):
        out[i] = rng.random() < to_one[out[i - 1]]
    return out
""",
            "booleans": """
def streaky_bits(alpha, rho, n, rng):
    bits = []
    for i in range(n):
        prob = alpha if i == 0 else (alpha + rho * (1 - alpha) if bits[-1] else alpha * (1 - rho))
        bits.append(rng.random() < prob)
    return bits
""",
        },
        "delegate": {
            "the course's reference from speclab.rules.streaks under another name": """
from speclab.rules.streaks import streaky_bits as _gen
def streaky_bits(alpha, rho, n, rng):
    return _gen(alpha, rho, n, rng)
""",
            "the transition probabilities from the course's module": """
import speclab.rules.streaks as st
def streaky_bits(alpha, rho, n, rng):
    stay, enter = st.transition(alpha, rho)
    bits, prob = [], alpha
    for _ in range(n):
        bits.append(1 if rng.random() < prob else 0)
        prob = stay if bits[-1] else enter
    return bits
""",
        },
    },
    "replay": {
        "wrong": {
            "alpha_run as the kept fraction kept / (rounds * k)": (edit(
                "return emitted / rounds, kept / tested, survival",
                "return emitted / rounds, kept / (rounds * k), survival"), "alpha_run = kept / tested"),
            "the bonus position counted as tested": edit("tested += j + 1 if j < k else k", "tested += j + 1"),
            "tokens per call counts only the kept drafts": edit(
                "return emitted / rounds, kept / tested, survival",
                "return kept / rounds, kept / tested, survival"),
            "no cap at k: a round runs to the first 0": edit(
                ("while j < k and bits[t + j] == 1:", "while t + j < len(bits) and bits[t + j] == 1:"),
                ("tested += j + 1 if j < k else k", "tested += j + 1"),
                ("counts[j] += 1", "counts[min(j, k)] += 1")),
            "after a full round the next starts at the bonus position": edit("t += j + 1", "t += j + 1 if j < k else k"),
            "survival[j] as the share of rounds that kept exactly j": edit(
                "survival = [sum(counts[j:]) / rounds for j in range(k + 1)]",
                "survival = [c / rounds for c in counts]"),
            "survival shifted by one (more than j kept)": edit(
                "survival = [sum(counts[j:]) / rounds for j in range(k + 1)]",
                "survival = [sum(counts[j + 1:]) / rounds for j in range(k + 1)]"),
            "plays a last round that runs past the end (t + k <= len)": edit(
                ("bits = [int(b) for b in bits]", '''
bits = [int(b) for b in bits] + [0] * (k + 1)
n = len(bits) - (k + 1)
'''),
                ("while t + k < len(bits):", "while t + k <= n:")),
        },
        "right": {
            "a list of kept counts, then the three numbers": """
def replay(bits, k):
    bits, per_round, t = list(bits), [], 0
    while t + k < len(bits):
        j = 0
        while j < k and bits[t + j]:
            j += 1
        per_round.append(j)
        t += j + 1
    rounds = len(per_round)
    tested = sum(j + 1 if j < k else k for j in per_round)
    survival = [sum(1 for j in per_round if j >= i) / rounds for i in range(k + 1)]
    return 1 + sum(per_round) / rounds, sum(per_round) / tested, survival
""",
            "NumPy on the kept counts": """
def replay(bits, k):
    b, kept, t = np.asarray(bits), [], 0
    while t + k < len(b):
        zeros = np.flatnonzero(b[t:t + k] == 0)
        j = int(zeros[0]) if zeros.size else k
        kept.append(j)
        t += j + 1
    kept = np.array(kept)
    tested = np.minimum(kept + 1, k).sum()
    survival = [float(np.mean(kept >= i)) for i in range(k + 1)]
    return float(np.mean(kept + 1)), float(kept.sum() / tested), survival
""",
        },
        "delegate": {
            "the course's reference from speclab.rules.streaks": """
from speclab.rules import streaks
def replay(bits, k):
    return streaks.replay(bits, k)
""",
        },
    },
    "first_draft_kept": {
        # The first two are what a student writes who transcribes the question without its mechanism: the share
        # of ones in the bits, or "a round starts after a rejection" without the rounds that end full.
        "wrong": {
            "transcribed: the share of ones in the bits (the chain's own long-run share)": ("""
def first_draft_kept(p_after_1, p_after_0, k):
    return p_after_0 / (1 - p_after_1 + p_after_0)
""", 'the share of ones in the bits'),
            "every round starts after a rejection": ("""
def first_draft_kept(p_after_1, p_after_0, k):
    return p_after_0
""", "as if every round started right after a rejection"),
            "the bonus position forgotten: after a full round the next start follows a 1": (edit(
                "two_after_a_one = p_after_1 * p_after_1 + (1 - p_after_1) * p_after_0  # across the bonus position",
                "two_after_a_one = p_after_1"), "started right after its last kept draft"),
            "a full round needs k more ones after the first": edit(
                "full = p_after_1 ** (k - 1)                                            # first kept, then k - 1 more",
                "full = p_after_1 ** k"),
            "the share of rounds that keep all k, not the first": edit(
                "return p_after_0 / (1 - kept_next + p_after_0)                         # the two-state chain of round starts",
                "return full * p_after_0 / (1 - kept_next + p_after_0)"),
            "the stationary share with the two states swapped": edit(
                "return p_after_0 / (1 - kept_next + p_after_0)                         # the two-state chain of round starts",
                "return (1 - kept_next) / (1 - kept_next + p_after_0)"),
            "simulated with Steps 1 and 2 (100,000 bits)": """
def first_draft_kept(p_after_1, p_after_0, k):
    alpha = p_after_0 / (1 - p_after_1 + p_after_0)
    rho = p_after_1 - p_after_0
    return replay(streaky_bits(alpha, rho, 100_000, np.random.default_rng(0)), k)[2][1]
""",
        },
        "right": {
            "the chain of round starts, solved with NumPy": """
def first_draft_kept(p_after_1, p_after_0, k):
    after_full = p_after_1 ** (k - 1) * (p_after_1 ** 2 + (1 - p_after_1) * p_after_0)
    after_kept = after_full + (1 - p_after_1 ** (k - 1)) * p_after_0
    T = np.array([[1 - p_after_0, p_after_0], [1 - after_kept, after_kept]])   # state: the round's first bit
    A = np.vstack([T.T - np.eye(2), np.ones(2)])
    pi = np.linalg.lstsq(A, np.array([0.0, 0.0, 1.0]), rcond=None)[0]
    return float(pi[1])
""",
            "counted per rejection: rounds after a 0 and after a full round": """
def first_draft_kept(p_after_1, p_after_0, k):
    # Let x be the share of round starts that follow a full round; the rest follow a 0.
    q_full = p_after_1 * p_after_1 + (1 - p_after_1) * p_after_0      # P(first bit is 1) after a full round
    f = p_after_1 ** (k - 1)
    # x = P(previous round was full) = P(first kept) * f, and P(first kept) = x * q_full + (1 - x) * p_after_0
    s = p_after_0 / (1 - f * (q_full - p_after_0))
    return s
""",
        },
        "delegate": {
            "the course's exact answer from speclab.rules.streaks": """
from speclab.rules.streaks import markov_bits_exact as _exact
def first_draft_kept(p_after_1, p_after_0, k):
    alpha = p_after_0 / (1 - p_after_1 + p_after_0)
    return _exact(alpha, p_after_1 - p_after_0, k)[2][1]
""",
        },
    },
}
