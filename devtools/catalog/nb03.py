"""Answers the 03_residual grader must judge: plausible mistakes, and correct variants.
Long because it is a table: one entry per mistake the grader is held to."""

from devtools.catalog import NUMPY_ATTACK, edit

AID = "03_residual"

# Exercise C's answer in the form most of its mistakes take: the kept mass written out and the rest of
# the probability spread over the fallback (the reference hands both to emitted_distribution).
_KEPT = """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p))
        m = int(np.argmax(p))
        kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
"""


# A student may write the frequency count as a helper in the same cell; these entries do.
_TV = """
def simulated_tv(sampler, p, q, n, rng):
    counts = np.zeros(len(p))
    for _ in range(n):
        counts[sampler(p, q, rng)] += 1
    return 0.5 * float(np.abs(counts / n - np.asarray(p, dtype=float)).sum())
"""

CATALOG = {
    "residual": {
        "wrong": {
            "not renormalised": """
def residual(p, q):
    return np.maximum(0, p - q)
""",
            "not clipped (p - q normalised by its positive part)": """
def residual(p, q):
    d = p - q
    return d / d[d > 0].sum()
""",
            "absolute difference instead of the positive part": """
def residual(p, q):
    d = np.abs(p - q)
    return d / d.sum()
""",
            "p/q inverted: max(0, q - p)": """
def residual(p, q):
    r = np.maximum(0, q - p)
    return r / r.sum() if r.sum() > 0 else p
""",
            "no fallback: nan when p == q": """
def residual(p, q):
    r = np.maximum(0, p - q)
    return r / r.sum()
""",
            "all zeros when p == q": """
def residual(p, q):
    r = np.maximum(0, p - q)
    s = r.sum()
    return r / s if s > 0 else r
""",
            "returns p (resample from the target)": """
def residual(p, q):
    return np.array(p, dtype=float)
""",
            "divided by sum |p - q| (that is 2 x the rejected mass)": """
def residual(p, q):
    return np.maximum(0, p - q) / np.abs(p - q).sum()
""",
            "numpy comparisons patched, then no renormalisation": NUMPY_ATTACK + """
def residual(p, q):
    return np.maximum(0, p - q)
""",
            "a uniform fallback when p == q (not the course's convention)": ("""
def residual(p, q):
    r = np.maximum(0.0, np.asarray(p) - np.asarray(q))
    if r.sum() == 0:
        return np.ones(len(p)) / len(p)
    return r / r.sum()
""", "return p itself"),
            "returns a Python list": ("""
def residual(p, q):
    r = [max(0.0, a - b) for a, b in zip(p, q)]
    s = sum(r)
    return [x / s for x in r] if s > 0 else list(p)
""", "NumPy array"),
        },
        "delegate": {
            "the course's residual under another name": """
from speclab.rules.speculative import residual as _course_residual
def residual(p, q):
    return _course_residual(p, q)
""",
            "the residual that speclab.views.onetoken imports, through the module": """
from speclab.views import onetoken as ot
def residual(p, q):
    return ot.residual(p, q)
""",
        },
        "right": {
            "clip and divide, p as fallback": """
def residual(p, q):
    r = np.clip(p - q, 0, None)
    return r / r.sum() if r.sum() > 0 else p
""",
            "q as fallback": """
def residual(p, q):
    r = np.where(p > q, p - q, 0.0)
    total = r.sum()
    if total == 0:
        return np.asarray(q, dtype=float)
    return r / total
""",
            "a Python loop": """
def residual(p, q):
    r = [max(0.0, a - b) for a, b in zip(p, q)]
    s = sum(r)
    return np.array([x / s for x in r]) if s > 0 else np.array(p, dtype=float)
""",
        },
    },
    "speculative_sample": {
        "wrong": {
            "resamples from p instead of the residual": edit(
                "return int(sample_from(residual(p, q), rng.random()))",
                "return int(sample_from(p, rng.random()))"),
            "resamples from q instead of the residual": edit(
                "return int(sample_from(residual(p, q), rng.random()))",
                "return int(sample_from(q, rng.random()))"),
            "p/q inverted in the accept test": edit(
                "if rng.random() < min(1.0, p[x] / q[x]):",
                "if rng.random() < min(1.0, q[x] / p[x]):"),
            "argmax agreement (greedy accept, no accept uniform)": edit("if rng.random() < min(1.0, p[x] / q[x]):", "if x == int(np.argmax(p)):"),
            "residual not renormalised": edit(
                "return int(sample_from(residual(p, q), rng.random()))",
                "return int(sample_from(np.maximum(0, p - q), rng.random()))"),
            "residual not clipped": edit(
                "return int(sample_from(residual(p, q), rng.random()))",
                '''
d = p - q
return int(sample_from(d / d[d > 0].sum(), rng.random()))
'''),
            "drafts from p instead of q": edit("x = sample_from(q, rng.random())", "x = sample_from(p, rng.random())"),
            "accept test flipped (keeps above the ratio)": edit(
                "if rng.random() < min(1.0, p[x] / q[x]):",
                "if rng.random() > min(1.0, p[x] / q[x]):"),
            "reuses the accept uniform for the residual (two draws)": edit(
                ("if rng.random() < min(1.0, p[x] / q[x]):", '''
u = rng.random()
if u < min(1.0, p[x] / q[x]):
'''),
                ("return int(sample_from(residual(p, q), rng.random()))", "return int(sample_from(residual(p, q), u))")),
            "draws the residual uniform before the accept test": edit(
                ("if rng.random() < min(1.0, p[x] / q[x]):", '''
y = sample_from(residual(p, q), rng.random())
if rng.random() < min(1.0, p[x] / q[x]):
'''),
                ("return int(sample_from(residual(p, q), rng.random()))", "return int(y)")),
            "keeps the draft on rejection (no correction at all)": edit(
                '''
if rng.random() < min(1.0, p[x] / q[x]):
    return int(x)
return int(sample_from(residual(p, q), rng.random()))
''',
                '''
rng.random()
return int(x)
'''),
            "returns the token as a NumPy integer": (edit(
                ("return int(x)", "return np.int64(x)"),
                ("return int(sample_from(residual(p, q), rng.random()))", "return np.int64(sample_from(residual(p, q), rng.random()))")), "Python int"),
        },
        "delegate": {
            "the course's speculative_sample through a module attribute": """
import speclab.rules.speculative as course
def speculative_sample(p, q, rng):
    return course.speculative_sample(p, q, rng)
""",
            "the course's accept_prob (notebook 02) for the accept test": """
from speclab.rules.speculative import accept_prob as keep_chance
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < keep_chance(p, q, x):
        return x
    return sample_from(residual(p, q), rng.random())
""",
        },
        "right": {
            "u <= p/q": edit("if rng.random() < min(1.0, p[x] / q[x]):", "if rng.random() <= p[x] / q[x]:"),
            "u * q[x] < p[x]": edit(
                "if rng.random() < min(1.0, p[x] / q[x]):",
                '''
u = rng.random()
if u * q[x] < p[x]:
'''),
            "inline residual with a uniform fallback": edit(
                ("if rng.random() < min(1.0, p[x] / q[x]):", "if rng.random() < p[x] / q[x]:"),
                ("return int(sample_from(residual(p, q), rng.random()))", '''
r = np.maximum(p - q, 0)
r = r / r.sum() if r.sum() > 0 else np.full(len(p), 1 / len(p))
return int(sample_from(r, rng.random()))
''')),
        },
    },
    "one_token_distribution": {
        "wrong": {
            "correct rule forgets to weight the residual by P(rejection)": edit(
                "return kept + (1 - kept.sum()) * fallback",
                'return kept + (1 - kept.sum()) * p if rule == "no_resample" else kept + residual(p, q)', base=_KEPT),
            "greedy compares with the draft's argmax": edit("m = int(np.argmax(p))", "m = int(np.argmax(q))", base=_KEPT),
            "greedy keeps p[argmax] instead of q[argmax]": edit("kept[m] = q[m]", "kept[m] = p[m]", base=_KEPT),
            "greedy keeps min(p, q) at the argmax": edit("kept[m] = q[m]", "kept[m] = min(p[m], q[m])", base=_KEPT),
            "greedy falls back to p": edit(
                "return kept + (1 - kept.sum()) * residual(p, q)",
                "return kept + (1 - kept.sum()) * p", base=_KEPT),
            "no_resample falls back to q": edit(
                'fallback = p if rule == "no_resample" else residual(p, q)',
                'fallback = q if rule == "no_resample" else residual(p, q)', base=_KEPT),
            "no_resample treated like the correct rule": edit(
                'fallback = p if rule == "no_resample" else residual(p, q)',
                "fallback = residual(p, q)", base=_KEPT),
            "kept mass q * min(1, p/q): nan where p = q = 0": edit(
                "kept = np.minimum(p, q)",
                "kept = q * np.minimum(1.0, p / q)", base=_KEPT),
            "keep probability inverted: q * min(1, q/p)": edit(
                "kept = np.minimum(p, q)",
                "kept = q * np.minimum(1.0, np.divide(q, p, out=np.ones(len(p)), where=p > 0))", base=_KEPT),
            "greedy keeps the LAST maximum on a tie": (edit(
                "m = int(np.argmax(p))",
                "m = len(p) - 1 - int(np.argmax(p[::-1]))", base=_KEPT), "FIRST maximum"),
            "greedy with p == q falls back on a uniform distribution": edit("return kept + (1 - kept.sum()) * residual(p, q)", '''
r = np.maximum(p - q, 0)
r = r / r.sum() if r.sum() > 0 else np.ones(len(p)) / len(p)
return kept + (1 - kept.sum()) * r
''', base=_KEPT),
            "returns a Python list": edit(
                ("return kept + (1 - kept.sum()) * residual(p, q)", "return list(kept + (1 - kept.sum()) * residual(p, q))"),
                ("return kept + (1 - kept.sum()) * fallback", "return list(kept + (1 - kept.sum()) * fallback)"), base=_KEPT),
            "the output renormalised from the kept mass alone (no rejection branch)": edit(
                ("return kept + (1 - kept.sum()) * residual(p, q)", "return kept / kept.sum()"),
                ("return kept + (1 - kept.sum()) * fallback", "return kept / kept.sum()"), base=_KEPT),
            "through emitted_distribution, with greedy's fallback taken as p": edit(
                "return emitted_distribution(p, q, residual(p, q), lambda p, q, x: float(x == best))",
                "return emitted_distribution(p, q, p, lambda p, q, x: float(x == best))"),
        },
        "right": {
            "emitted_distribution with each rule's accept test and fallback": """
def one_token_distribution(p, q, rule="correct"):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    tests = {"correct": accept_prob, "no_resample": accept_prob,
             "greedy": lambda p, q, x: float(x == int(np.argmax(p)))}
    fallback = p if rule == "no_resample" else residual(p, q)
    return emitted_distribution(p, q, fallback, tests[rule])
""",
            "kept + P(reject) * fallback": _KEPT,
            "the correct rule returns p (the theorem) and the others are computed": """
def one_token_distribution(p, q, rule="correct"):
    p = np.asarray(p, dtype=float)
    if rule == "correct":
        return p.copy()
    if rule == "no_resample":
        m = np.minimum(p, q)
        return m + (1 - m.sum()) * p
    best = p.argmax()
    out = (1 - q[best]) * residual(p, q)
    out[best] += q[best]
    return out
""",
            "kept mass written p * min(1, q/p) (the same min(p, q))": edit(
                "kept = np.minimum(p, q)",
                "kept = p * np.minimum(1.0, np.divide(q, p, out=np.ones(len(p)), where=p > 0))", base=_KEPT),
            "a loop over drafted tokens, guarding q = 0": """
def one_token_distribution(p, q, rule="correct"):
    out = np.zeros(len(p))
    reject = 0.0
    best = int(np.argmax(p))
    for x in range(len(q)):
        if q[x] == 0:
            continue
        keep = (1.0 if x == best else 0.0) if rule == "greedy" else min(1.0, p[x] / q[x])
        out[x] += q[x] * keep
        reject += q[x] * (1 - keep)
    fallback = p if rule == "no_resample" else residual(p, q)
    return out + reject * np.asarray(fallback)
""",
        },
        "delegate": {
            "the course's one_token_distribution from speclab.views.onetoken": """
from speclab.views.onetoken import one_token_distribution as exact_step
def one_token_distribution(p, q, rule="correct"):
    return exact_step(p, q, rule)
""",
            "the widget's helper one_token_parts, summed": """
from speclab.views import onetoken
def one_token_distribution(p, q, rule="correct"):
    kept, rest = onetoken.one_token_parts(p, q, rule)
    return kept + rest
""",
        },
    },
    "resample_sample": {
        "wrong": {
            "not broken: samples the residual as before": (edit(
                "return int(sample_from(p, rng.random()))",
                "return int(sample_from(residual(p, q), rng.random()))"), "a rejection does not sample the residual"),
            "samples q on rejection": edit(
                "return int(sample_from(p, rng.random()))",
                "return int(sample_from(q, rng.random()))"),
            "drops the accept test (always resamples from p)": edit(
                '''
x = sample_from(q, rng.random())
if rng.random() < min(1.0, p[x] / q[x]):
    return int(x)
''',
                '''
sample_from(q, rng.random())
rng.random()
'''),
            "reuses the accept uniform for the p sample": edit(
                ("if rng.random() < min(1.0, p[x] / q[x]):", '''
u = rng.random()
if u < min(1.0, p[x] / q[x]):
'''),
                ("return int(sample_from(p, rng.random()))", "return int(sample_from(p, u))")),
            "samples p without drafting (no draft uniform)": edit(
                '''
x = sample_from(q, rng.random())
if rng.random() < min(1.0, p[x] / q[x]):
    return int(x)
''',
                ""),
            "p/q inverted in the accept test": edit(
                "if rng.random() < min(1.0, p[x] / q[x]):",
                "if rng.random() < min(1.0, q[x] / p[x]):"),
        },
        "right": {
            "u * q[x] < p[x], ints": """
def resample_sample(p, q, rng):
    x = int(sample_from(q, rng.random()))
    u = rng.random()
    return x if u * q[x] < p[x] else int(sample_from(p, rng.random()))
""",
        },
        "delegate": {
            "the accept test handed to the course's accept_prob (notebook 02)": """
from speclab.rules import speculative
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < speculative.accept_prob(p, q, x):
        return x
    return sample_from(p, rng.random())
""",
        },
    },
    "detection_power": {
        "wrong": {
            "a count of the trials above the threshold, not a share": (_TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, n, rng) > threshold for _ in range(trials))
""", "a share of the trials, not a count"),
            "at or above the threshold (>=), not strictly above": (edit(
                "if 0.5 * float(np.abs(counts / n - p).sum()) > threshold:",
                "if 0.5 * float(np.abs(counts / n - p).sum()) >= threshold:"), "strictly above"),
            "the share at or below the threshold (the misses)": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, n, rng) <= threshold for _ in range(trials)) / trials
""",
            "n and trials swapped": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, trials, rng) > threshold for _ in range(n)) / n
""",
            "one count of n * trials tokens, compared once": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return float(simulated_tv(sampler, p, q, n * trials, rng) > threshold)
""",
            "the mean distance compared with the threshold": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    tvs = [simulated_tv(sampler, p, q, n, rng) for _ in range(trials)]
    return float(np.mean(tvs) > threshold)
""",
            "a fresh generator for every count": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, n, np.random.default_rng(i)) > threshold for i in range(trials)) / trials
""",
            "the student's own speculative_sample instead of the sampler given": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(speculative_sample, p, q, n, rng) > threshold for _ in range(trials)) / trials
""",
            "the share of the trials above the noise floor, ignoring the threshold": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    floor = float(np.sqrt(np.asarray(p) * (1 - np.asarray(p)) / (2 * np.pi * n)).sum())
    return sum(simulated_tv(sampler, p, q, n, rng) > floor for _ in range(trials)) / trials
""",
            "the counts carried over from one test to the next": edit(
                ("counts = np.zeros(len(p))", ""), ("above = 0", "above, counts = 0, np.zeros(len(p))")),
            "the distance without its half (the sum of |f - p|)": edit(
                "if 0.5 * float(np.abs(counts / n - p).sum()) > threshold:",
                "if float(np.abs(counts / n - p).sum()) > threshold:"),
            "the distance over the tokens that came out only": edit(
                "if 0.5 * float(np.abs(counts / n - p).sum()) > threshold:",
                "if 0.5 * float(np.abs(counts / n - p)[counts > 0].sum()) > threshold:"),
        },
        "right": {
            "NumPy mean of a boolean array, a helper in the same cell": _TV + """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    tvs = np.array([simulated_tv(sampler, p, q, n, rng) for _ in range(trials)])
    return float(np.mean(tvs > threshold))
""",
            "np.bincount of the drawn tokens": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    above = 0
    for _ in range(trials):
        freq = np.bincount([sampler(p, q, rng) for _ in range(n)], minlength=len(p)) / n
        above += 0.5 * np.abs(freq - np.asarray(p)).sum() > threshold
    return above / trials
""",
        },
        "delegate": {
            "the course's tv_distance on its own counts (notebook 04's helper)": """
import speclab.rules.speculative as sp
def detection_power(sampler, p, q, n, trials, threshold, rng):
    above = 0
    for _ in range(trials):
        freq = np.bincount([sampler(p, q, rng) for _ in range(n)], minlength=len(p)) / n
        above += sp.tv_distance(freq, p) > threshold
    return above / trials
""",
        },
    },
    "redraft_distribution": {
        "wrong": {
            "the draft put where the proof's line has the residual: min(p, q) + (1 - alpha) q (the transcriber's)": ("""
def redraft_distribution(p, q, tries):
    return emitted_distribution(p, q, q, accept_prob)
""", "emits a fresh draft untested after its first rejection"),
            "the uncapped sampler's answer, min(p, q) / alpha: tries ignored": ("""
def redraft_distribution(p, q, tries):
    return np.minimum(p, q) / acceptance_rate(p, q)
""", "never stops testing"),
            "resampling from p, Exercise C's no_resample": ("""
def redraft_distribution(p, q, tries):
    return one_token_distribution(p, q, "no_resample")
""", "no_resample"),
            "p itself: every tested token passed the test, so it must be exact": ("""
def redraft_distribution(p, q, tries):
    return np.asarray(p, dtype=float).copy()
""", "this sampler is not exact"),
            "q itself: only drafts come out": ("""
def redraft_distribution(p, q, tries):
    return np.asarray(q, dtype=float).copy()
""", "only after every test rejected"),
            "the untested draft left out: the kept mass of the tested attempts only": (edit(
                "return kept * reached + fail ** tries * q", "return kept * reached"), "sum to 1"),
            "the untested draft left out, the rest renormalised": (edit(
                "return kept * reached + fail ** tries * q", "return kept * reached / (kept * reached).sum()"),
                "never stops testing"),
            "one test too many": edit(
                ("reached = sum(fail ** j for j in range(tries))", "reached = sum(fail ** j for j in range(tries + 1))"),
                ("return kept * reached + fail ** tries * q", "return kept * reached + fail ** (tries + 1) * q")),
            "one test too few": edit(
                ("reached = sum(fail ** j for j in range(tries))", "reached = sum(fail ** j for j in range(tries - 1))"),
                ("return kept * reached + fail ** tries * q", "return kept * reached + fail ** max(tries - 1, 0) * q")),
            "the untested draft taken from p": edit(
                "return kept * reached + fail ** tries * q", "return kept * reached + fail ** tries * p"),
            "the untested draft taken from the residual": edit(
                "return kept * reached + fail ** tries * q", "return kept * reached + fail ** tries * residual(p, q)"),
            "every attempt reached, none after a failure only: kept * tries": edit(
                "reached = sum(fail ** j for j in range(tries))", "reached = tries"),
            "the closed form divided by alpha, nan where the two never overlap": ("""
def redraft_distribution(p, q, tries):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    a = acceptance_rate(p, q)
    return np.minimum(p, q) * (1 - (1 - a) ** tries) / a + (1 - a) ** tries * q
""", "no nan"),
            "counted: 20,000 runs of the team's sampler": """
def redraft_distribution(p, q, tries):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    rng = np.random.default_rng(0)
    counts = np.zeros(len(p))
    for _ in range(20_000):
        for _ in range(tries):
            x = sample_from(q, rng.random())
            if rng.random() < min(1.0, p[x] / q[x]):
                break
        else:
            x = sample_from(q, rng.random())
        counts[x] += 1
    return counts / 20_000
""",
            "a Python list": edit(
                "return kept * reached + fail ** tries * q", "return list(kept * reached + fail ** tries * q)"),
        },
        "right": {
            "unrolled from the untested draft back: out = kept + (1 - alpha) out, tries times": """
def redraft_distribution(p, q, tries):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept, a = np.minimum(p, q), acceptance_rate(p, q)
    out = q.copy()
    for _ in range(tries):
        out = kept + (1 - a) * out
    return out
""",
            "notebook 02's one-step sum, the rest of the sampler as its fallback": """
def redraft_distribution(p, q, tries):
    out = np.asarray(q, dtype=float)
    for _ in range(tries):
        out = emitted_distribution(p, q, out, accept_prob)
    return np.asarray(out, dtype=float)
""",
            "the closed form, with the pair that never overlaps apart": """
def redraft_distribution(p, q, tries):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    a = kept.sum()
    if a == 0:
        return q.copy()
    return kept * (1 - (1 - a) ** tries) / a + (1 - a) ** tries * q
""",
        },
        "delegate": {
            "the geometric sum from the course's expected_tokens (notebook 05)": """
from speclab.speed import costs as _c
def redraft_distribution(p, q, tries):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    fail = 1 - kept.sum()
    return kept * float(_c.expected_tokens(fail, tries - 1)) + fail ** tries * q
""",
        },
    },
}
