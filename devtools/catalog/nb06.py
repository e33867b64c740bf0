"""Wrong, right and delegating answers for 06_break_even's exercises (see devtools/catalog/__init__.py).
Long because it is a table: one entry per mistake the grader is held to."""
from devtools.catalog import edit

AID = "06_break_even"

CATALOG = {
    "break_even_cost": {
        "delegate": {
            "the course's break_even_cost under another name": '''
from speclab.speed.costs import break_even_cost as _bec
def break_even_cost(tokens_per_call, k):
    return _bec(tokens_per_call, k)
''',
        },
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
        "delegate": {
            "costs.best_k through the module, then the formula": '''
from speclab.speed import costs
def best_speedup(a, c, k_max):
    k = costs.best_k(a, c, k_max)
    return k, speedup(expected_tokens(a, k), k, c)
''',
            "the course's best_speedup under another name": '''
from speclab.speed.costs import best_speedup as _bs
def best_speedup(a, c, k_max):
    return _bs(a, c, k_max)
''',
        },
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
            "the last k on a tie (>=)": ('''
def best_speedup(a, c, k_max):
    best = (1, -1.0)
    for k in range(1, k_max + 1):
        s = speedup(expected_tokens(a, k), k, c)
        if s >= best[1]:
            best = (k, s)
    return best
''', 'on an exact tie take the smaller k'),
            "returns a list, not a tuple": ('''
def best_speedup(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    i = int(np.argmax(gains))
    return [i + 1, gains[i]]
''', 'must return a tuple'),
            "k as a float": '''
def best_speedup(a, c, k_max):
    gains = [speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1)]
    i = int(np.argmax(gains))
    return float(i + 1), gains[i]
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
        "delegate": {
            "costs.best_speedup_grid through the package": '''
import speclab.speed.costs
def should_speculate(a, draft_params, target_params, k_max=16):
    c = draft_params / target_params
    return bool(speclab.speed.costs.best_speedup_grid([a], [c], k_max)[0, 0] > 1)
''',
            "the course's corollary_bound": '''
from speclab.speed.costs import corollary_bound as cb
def should_speculate(a, draft_params, target_params, k_max=16):
    return cb(a, draft_params / target_params) > 1
''',
        },
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
            "returns the best speedup instead of a boolean": ('''
def should_speculate(a, draft_params, target_params, k_max=16):
    c = draft_params / target_params
    s = max(speedup(expected_tokens(a, k), k, c) for k in range(1, k_max + 1))
    return s if s > 1 else 0.0
''', 'return a boolean'),
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
    "seconds_per_token": {
        "wrong": {
            "the size clock still charges the fixed cost to the target's verify call": (edit(
                "t_target = fixed + STEP_S_PER_PARAM * target_params",
                "t_target = STEP_FIXED_S + STEP_S_PER_PARAM * target_params"), 'a fixed cost is still charged'),
            "the measured clock charges the fixed cost to the draft only": edit(
                "t_target = fixed + STEP_S_PER_PARAM * target_params",
                "t_target = STEP_S_PER_PARAM * target_params"),
            "the fixed cost paid once per round, not per step": edit(
                "seconds += k * t_draft + t_target",
                "seconds += fixed + STEP_S_PER_PARAM * (k * draft_params + target_params)"),
            "both clocks the same (the size clock not built)": edit('''
fixed = STEP_FIXED_S if clock == "measured" else 0.0
t_draft = fixed + STEP_S_PER_PARAM * draft_params
t_target = fixed + STEP_S_PER_PARAM * target_params
''', '''
t_draft = STEP_FIXED_S + STEP_S_PER_PARAM * draft_params
t_target = STEP_FIXED_S + STEP_S_PER_PARAM * target_params
'''),
            "clocks swapped": edit(('''
fixed = STEP_FIXED_S if clock == "measured" else 0.0
t_draft = fixed + STEP_S_PER_PARAM * draft_params
t_target = fixed + STEP_S_PER_PARAM * target_params
''', 'fixed = STEP_FIXED_S if clock == "size" else 0.0'), ("seconds += k * t_draft + t_target", "seconds += k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params")),
            "seconds per round instead of per token": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    seconds, t = 0.0, 0
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        seconds += k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params
        t = out[-1]
    return seconds / rounds
''',
            "divides by the kept drafts only": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    kept, seconds, t = 0, 0.0, 0
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        seconds += k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params
        kept += len(out) - 1
        t = out[-1]
    return seconds / max(kept, 1)
''',
            "k + 1 draft steps per round": edit(
                "seconds += k * t_draft + t_target",
                "seconds += (k + 1) * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params"),
            "the verify call priced as k + 1 target steps": edit(
                "seconds += k * t_draft + t_target",
                "seconds += k * (fixed + STEP_S_PER_PARAM * draft_params) + (k + 1) * (fixed + STEP_S_PER_PARAM * target_params)"),
            "every round restarts from token 0": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    emitted = 0
    for _ in range(rounds):
        out = verify_round(P, Q, 0, draft_tokens(Q, 0, k, rng), rng)
        emitted += len(out)
    return rounds * (k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params) / emitted
''',
            "milliseconds instead of seconds": edit(
                ("seconds += k * t_draft + t_target", "seconds += k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params"),
                ("return seconds / emitted", "return 1e3 * seconds / emitted")),
            "target steps per token (forgets the seconds)": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    c = (fixed + STEP_S_PER_PARAM * draft_params) / (fixed + STEP_S_PER_PARAM * target_params)
    emitted, t = 0, 0
    for _ in range(rounds):
        out = verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)
        emitted += len(out)
        t = out[-1]
    return rounds * (1 + k * c) / emitted
''',
        },
        "right": {
            "count tokens, then price every round at once, clocks in a dict": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    step = {"measured": lambda n: STEP_FIXED_S + STEP_S_PER_PARAM * n,
            "size": lambda n: STEP_S_PER_PARAM * n}[clock]
    lengths, t = [], 0
    for _ in range(rounds):
        drafted = draft_tokens(Q, t, k, rng)
        out = verify_round(P, Q, t, drafted, rng)
        lengths.append(len(out))
        t = out[-1]
    return float(rounds * (k * step(draft_params) + step(target_params)) / np.sum(lengths))
''',
            "one clock tick per step": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    def tick(n):
        return (STEP_FIXED_S if clock != "size" else 0.0) + n * STEP_S_PER_PARAM
    now, tokens, t = 0.0, 0, 0
    for _ in range(rounds):
        drafted = draft_tokens(Q, t, k, rng)
        for _ in drafted:
            now += tick(draft_params)
        out = verify_round(P, Q, t, drafted, rng)
        now += tick(target_params)
        tokens += len(out)
        t = out[-1]
    return now / tokens
''',
        },
        "delegate": {
            "the notebook's own import: 05's measure, priced with speedup": '''
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    t_target = fixed + STEP_S_PER_PARAM * target_params
    tokens = measure(P, Q, k, rounds, rng, fast=False)[1]
    return t_target / speedup(tokens, k, (fixed + STEP_S_PER_PARAM * draft_params) / t_target)
''',
            "the sweeps module's run_rounds through an attribute": '''
import speclab.decoding.sweeps as sw
def seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock="measured"):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    _, emitted = sw.run_rounds(P, Q, k, rounds, rng)
    return rounds * (k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params) / emitted
''',
        },
    },
    "speedups_by_k": {
        "wrong": {
            "one generator shared by every k": (edit(
                ("plain = fixed + STEP_S_PER_PARAM * target_params", '''
plain = fixed + STEP_S_PER_PARAM * target_params
rng = np.random.default_rng(seed)
'''),
                ("return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)", "return [plain / seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock)")), 'with a fresh np.random.default_rng(seed)'),
            "plain decoding priced on the measured clock whatever the clock": (edit(
                "plain = fixed + STEP_S_PER_PARAM * target_params",
                "plain = STEP_FIXED_S + STEP_S_PER_PARAM * target_params"), 'a fixed cost is charged somewhere'),
            "returns the seconds per token, not the speedups": edit(
                "return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)",
                "return [seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)"),
            "the clock not passed on: every run on the measured clock": edit(
                "return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)",
                "return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params)"),
            "stops at k_max - 1": edit("for k in range(1, k_max + 1)]", "for k in range(1, k_max)]"),
            "starts at k = 0": edit("for k in range(1, k_max + 1)]", "for k in range(0, k_max)]"),
            "the tokens per call instead of the speedup": '''
def speedups_by_k(P, Q, k_max, rounds, seed, draft_params, target_params, clock):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    out = []
    for k in range(1, k_max + 1):
        sec = seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)
        round_time = k * (fixed + STEP_S_PER_PARAM * draft_params) + fixed + STEP_S_PER_PARAM * target_params
        out.append(round_time / sec)
    return out
''',
            "a generator seeded seed + k": edit(
                "return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)",
                "return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed + k), draft_params, target_params, clock)"),
        },
        "right": {
            "a list comprehension": '''
def speedups_by_k(P, Q, k_max, rounds, seed, draft_params, target_params, clock):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    plain = fixed + STEP_S_PER_PARAM * target_params
    return [plain / seconds_per_token(P, Q, k, rounds, np.random.default_rng(seed), draft_params, target_params, clock)
            for k in range(1, k_max + 1)]
''',
            "a loop, numpy floats": '''
def speedups_by_k(P, Q, k_max, rounds, seed, draft_params, target_params, clock):
    plain = STEP_S_PER_PARAM * target_params + (STEP_FIXED_S if clock != "size" else 0.0)
    out = []
    for k in range(1, k_max + 1):
        rng = np.random.default_rng(seed)
        out.append(np.float64(plain) / seconds_per_token(P, Q, k, rounds, rng, draft_params, target_params, clock=clock))
    return out
''',
        },
        "delegate": {
            "notebook 05's measure from speclab.decoding.sweeps in place of the student's clock": '''
from speclab.decoding import sweeps
def speedups_by_k(P, Q, k_max, rounds, seed, draft_params, target_params, clock):
    fixed = STEP_FIXED_S if clock == "measured" else 0.0
    t_d, t_t = fixed + STEP_S_PER_PARAM * draft_params, fixed + STEP_S_PER_PARAM * target_params
    out = []
    for k in range(1, k_max + 1):
        tokens = sweeps.measure(P, Q, k, rounds, np.random.default_rng(seed))[1]
        out.append(t_t * tokens / (t_t + k * t_d))
    return out
''',
        },
    },
}

# The Diagnose part of the break-it. The first wrong entry is what a student who transcribes the notebook writes:
# the corollary applied to both prices, (c by size, c measured), as if the team deployed the measured clock's best k.
_TRAP = '''
def size_priced_trap(draft_params, target_params, k_max=16):
    c_size = draft_params / target_params
    c_measured = fitted_step(draft_params) / fitted_step(target_params)

    def tokens(a, k):
        return sum(a ** i for i in range(k + 1))

    def slower(a):
        gains = [tokens(a, k) / (1 + k * c_size) for k in range(1, k_max + 1)]
        k = gains.index(max(gains)) + 1
        return tokens(a, k) < 1 + k * c_measured

    grid = np.linspace(c_size, 1.0, 1001)[1:]
    last = max(i for i, a in enumerate(grid) if slower(a))
    lo, hi = grid[last], grid[last + 1]
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if slower(mid) else (lo, mid)
    return c_size, float(lo)
'''

CATALOG["size_priced_trap"] = {
    "wrong": {
        "transcribed: the corollary on both clocks, (c by size, c measured)": (('''
def size_priced_trap(draft_params, target_params, k_max=16):
    return draft_params / target_params, fitted_step(draft_params) / fitted_step(target_params)
'''), "measured price c, below which every k is slower"),
        "high where the measured clock's own best k breaks even": edit(
            "gains = [tokens(a, k) / (1 + k * c_size) for k in range(1, k_max + 1)]",
            "gains = [tokens(a, k) / (1 + k * c_measured) for k in range(1, k_max + 1)]", base=_TRAP),
        "the team always deploys k = 1": edit(("gains = [tokens(a, k) / (1 + k * c_size) for k in range(1, k_max + 1)]", ""),
                                          ("k = gains.index(max(gains)) + 1", "k = 1"), base=_TRAP),
        "the team always deploys k_max": edit(("gains = [tokens(a, k) / (1 + k * c_size) for k in range(1, k_max + 1)]", ""),
                                               ("k = gains.index(max(gains)) + 1", "k = k_max"), base=_TRAP),
        "the target's step priced by size on the measured clock": edit(
            "c_measured = fitted_step(draft_params) / fitted_step(target_params)",
            "c_measured = fitted_step(draft_params) / (STEP_S_PER_PARAM * target_params)", base=_TRAP),
        "the first slow acceptance's top (stops at c measured)": edit(
            "last = max(i for i, a in enumerate(grid) if slower(a))",
            "last = next(i for i, a in enumerate(grid) if not slower(a)) - 1", base=_TRAP),
        "low and high swapped": edit("return c_size, float(lo)", "return float(lo), c_size", base=_TRAP),
        "the team's sweep run through best_speedup (not available in the Diagnose)": (edit(
            ("gains = [tokens(a, k) / (1 + k * c_size) for k in range(1, k_max + 1)]", ""),
            ("k = gains.index(max(gains)) + 1", "k, _ = best_speedup(a, c_size, k_max)"), base=_TRAP),
            "best_speedup is not available in the Diagnose"),
        "the measured speedup through speedup and expected_tokens (not available in the Diagnose)": (edit(
            "return tokens(a, k) < 1 + k * c_measured",
            "return speedup(expected_tokens(a, k), k, c_measured) < 1", base=_TRAP),
            "is not available in the Diagnose"),
    },
    "right": {
        "grid then bisection, in plain Python": _TRAP,
        "closed forms per k: the top root of tokens(a, k) = 1 + k c over the team's k ranges": '''
def size_priced_trap(draft_params, target_params, k_max=16):
    c_size = draft_params / target_params
    c_meas = (STEP_FIXED_S + STEP_S_PER_PARAM * draft_params) / (STEP_FIXED_S + STEP_S_PER_PARAM * target_params)
    def tok(a, k):
        return float(k + 1) if a == 1 else (1 - a ** (k + 1)) / (1 - a)
    def gap(a):
        k = max(range(1, k_max + 1), key=lambda j: (tok(a, j) / (1 + j * c_size), -j))
        return float(tok(a, k)) - (1 + k * c_meas)
    a_s = np.linspace(c_size, 1.0, 4001)[1:]
    slow = [a for a in a_s if gap(a) < 0]
    lo = slow[-1]
    hi = a_s[list(a_s).index(lo) + 1]
    while hi - lo > 1e-15:
        mid = 0.5 * (lo + hi)
        if gap(mid) < 0:
            lo = mid
        else:
            hi = mid
    return float(c_size), float(lo)
''',
    },
    "delegate": {
        "the course's best_speedup under another name for the team's k":
            "from speclab.speed.costs import best_speedup as _bs\n" + _TRAP.replace(
                "        gains = [tokens(a, k) / (1 + k * c_size) for k in range(1, k_max + 1)]\n", "").replace(
                "k = gains.index(max(gains)) + 1", "k, _ = _bs(a, c_size, k_max)"),
    },
}
