"""Wrong and right answers for 06_break_even's exercises (see devtools/catalog/__init__.py)."""
AID = "06_break_even"

CATALOG = {
    "break_even_cost": {
        "wrong": {
            "c* without the - 1": ('''
def break_even_cost(tokens_per_call, k):
    return tokens_per_call / k
''', 'not a kept draft'),
            "divides by k + 1": '''
def break_even_cost(tokens_per_call, k):
    return (tokens_per_call - 1) / (k + 1)
''',
            "inverted": '''
def break_even_cost(tokens_per_call, k):
    return k / (tokens_per_call - 1) if tokens_per_call != 1 else float("inf")
''',
            "multiplies by k": '''
def break_even_cost(tokens_per_call, k):
    return (tokens_per_call - 1) * k
''',
            "1 - 1/tokens (solves the wrong equation)": '''
def break_even_cost(tokens_per_call, k):
    return 1 - 1 / tokens_per_call
''',
        },
        "right": {
            "(tokens - 1) / k": '''
def break_even_cost(tokens_per_call, k):
    return (tokens_per_call - 1) / k
''',
            "tokens / k - 1 / k": '''
def break_even_cost(tokens_per_call, k):
    return tokens_per_call / k - 1 / k
''',
            "numpy": '''
def break_even_cost(tokens_per_call, k):
    return float(np.divide(np.subtract(tokens_per_call, 1.0), k))
''',
        },
    },
    "best_speedup": {
        "wrong": {
            "0-based index for k": ('''
def best_speedup(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    i = int(np.argmax(gains))
    return i, gains[i]
''', 'not a 0-based index'),
            "returns tokens per call instead of the speedup": '''
def best_speedup(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    i = int(np.argmax(gains))
    return i + 1, expected_tokens(a, i + 1)
''',
            "pair in the wrong order": '''
def best_speedup(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    i = int(np.argmax(gains))
    return gains[i], i + 1
''',
            "searches 1..k_max - 1": '''
def best_speedup(a, c, k_max):
    ks = list(range(1, k_max)) or [1]
    k = max(ks, key=lambda j: speedup(expected_tokens(a, j), j, c))
    return k, speedup(expected_tokens(a, k), k, c)
''',
            "searches from k = 0": '''
def best_speedup(a, c, k_max):
    k = max(range(0, k_max + 1), key=lambda j: speedup(expected_tokens(a, j), j, c))
    return k, speedup(expected_tokens(a, k), k, c)
''',
            "maximises tokens, ignoring the draft cost": '''
def best_speedup(a, c, k_max):
    k = max(range(1, k_max + 1), key=lambda j: expected_tokens(a, j))
    return k, speedup(expected_tokens(a, k), k, c)
''',
            "returns only k": '''
def best_speedup(a, c, k_max):
    return max(range(1, k_max + 1), key=lambda j: speedup(expected_tokens(a, j), j, c))
''',
        },
        "right": {
            "argmax + 1": '''
def best_speedup(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    i = int(np.argmax(gains))
    return i + 1, gains[i]
''',
            "max with a key, formula inlined": '''
def best_speedup(a, c, k_max):
    def s(k):
        return sum(a ** j for j in range(k + 1)) / (1 + k * c)
    k = max(range(1, k_max + 1), key=lambda j: (s(j), -j))
    return k, s(k)
''',
            "vectorised over k": '''
def best_speedup(a, c, k_max):
    ks = np.arange(1, k_max + 1)
    gains = np.array([expected_tokens(a, int(k)) for k in ks]) / (1 + ks * c)
    i = int(np.argmax(gains))
    return int(ks[i]), float(gains[i])
''',
        },
    },
    "should_speculate": {
        "wrong": {
            "a speedup of exactly 1 counted as a gain": ('''
def should_speculate(a, draft_params, target_params, k_max=16):
    c = draft_params / target_params
    return best_speedup(a, c, k_max)[1] >= 1
''', 'speedup exactly 1 is not a gain'),
            "c inverted: target over draft": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    c = target_params / draft_params
    return best_speedup(a, c, k_max)[1] > 1
''',
            "only tries k = k_max": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    c = draft_params / target_params
    return speedup(expected_tokens(a, k_max), k_max, c) > 1
''',
            "ignores the draft's cost": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    return expected_tokens(a, k_max) > 1
''',
            "alpha >= c": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    return a >= draft_params / target_params
''',
            "any draft under half the target's size": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    return draft_params < 0.5 * target_params and a > 0.5
''',
        },
        "right": {
            "the corollary: alpha > c": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    return a > draft_params / target_params
''',
            "any k wins": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    c = draft_params / target_params
    return any(speedup(expected_tokens(a, k), k, c) > 1 for k in range(1, k_max + 1))
''',
            "k = 1 is enough to decide": '''
def should_speculate(a, draft_params, target_params, k_max=16):
    return (1 + a) / (1 + draft_params / target_params) > 1
''',
        },
    },
    "deployment_speedup": {
        "wrong": {
            "returns the accept rate as tokens per call": '''
def deployment_speedup(P, Q, k, c, rounds, rng):
    a, tokens = sweeps.measure(P, Q, k, rounds, rng)
    return a, speedup(tokens, k, c)
''',
            "speedup without k": ('''
def deployment_speedup(P, Q, k, c, rounds, rng):
    _, tokens = sweeps.measure(P, Q, k, rounds, rng)
    return tokens, tokens / (1 + c)
''', '1 + 4 * 0.6'),
            "prices only the kept drafts": '''
def deployment_speedup(P, Q, k, c, rounds, rng):
    _, tokens = sweeps.measure(P, Q, k, rounds, rng)
    return tokens, tokens / (1 + (tokens - 1) * c)
''',
            "ignores the rng it was given": '''
def deployment_speedup(P, Q, k, c, rounds, rng):
    _, tokens = sweeps.measure(P, Q, k, rounds, np.random.default_rng(40))
    return tokens, speedup(tokens, k, c)
''',
            "tokens per call miscounted by one": '''
def deployment_speedup(P, Q, k, c, rounds, rng):
    a, _ = sweeps.measure(P, Q, k, rounds, rng)
    tokens = a * k
    return tokens, speedup(tokens, k, c)
''',
        },
        "right": {
            "measure, then price": '''
def deployment_speedup(P, Q, k, c, rounds, rng):
    tokens = sweeps.measure(P, Q, k, rounds, rng)[1]
    return tokens, tokens / (1 + k * c)
''',
            "the plain loop": '''
def deployment_speedup(P, Q, k, c, rounds, rng):
    accepted, emitted = sweeps.run_rounds(P, Q, k, rounds, rng)
    return emitted / rounds, speedup(emitted / rounds, k, c)
''',
        },
    },
}
