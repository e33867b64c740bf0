"""Answers the 03_residual grader must judge: plausible mistakes, and correct variants."""

from devtools.catalog import NUMPY_ATTACK, edit

AID = "03_residual"


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
from speclab.speculative import residual as _course_residual
def residual(p, q):
    return _course_residual(p, q)
""",
            "the residual that speclab.onetoken imports, through the module": """
from speclab import onetoken as ot
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
            "resamples from p instead of the residual": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(p, rng.random())
""",
            "resamples from q instead of the residual": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(q, rng.random())
""",
            "p/q inverted in the accept test": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, q[x] / p[x]):
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "argmax agreement (greedy accept, no accept uniform)": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if x == int(np.argmax(p)):
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "residual not renormalised": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(np.maximum(0, p - q), rng.random())
""",
            "residual not clipped": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    d = p - q
    return sample_from(d / d[d > 0].sum(), rng.random())
""",
            "drafts from p instead of q": """
def speculative_sample(p, q, rng):
    x = sample_from(p, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "accept test flipped (keeps above the ratio)": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() > min(1.0, p[x] / q[x]):
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "reuses the accept uniform for the residual (two draws)": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    u = rng.random()
    if u < min(1.0, p[x] / q[x]):
        return x
    return sample_from(residual(p, q), u)
""",
            "draws the residual uniform before the accept test": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    y = sample_from(residual(p, q), rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return y
""",
            "keeps the draft on rejection (no correction at all)": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    rng.random()
    return x
""",
            "returns the token as a NumPy integer": ("""
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return np.int64(x)
    return np.int64(sample_from(residual(p, q), rng.random()))
""", "Python int"),
        },
        "delegate": {
            "the course's speculative_sample through a module attribute": """
import speclab.speculative as course
def speculative_sample(p, q, rng):
    return course.speculative_sample(p, q, rng)
""",
            "the course's accept_prob (notebook 02) for the accept test": """
from speclab.speculative import accept_prob as keep_chance
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < keep_chance(p, q, x):
        return x
    return sample_from(residual(p, q), rng.random())
""",
        },
        "right": {
            "u < min(1, p/q)": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "u <= p/q": edit("if rng.random() < min(1.0, p[x] / q[x]):", "if rng.random() <= p[x] / q[x]:"),
            "u * q[x] < p[x]": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    u = rng.random()
    if u * q[x] < p[x]:
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "inline residual with a uniform fallback": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < p[x] / q[x]:
        return x
    r = np.maximum(p - q, 0)
    r = r / r.sum() if r.sum() > 0 else np.full(len(p), 1 / len(p))
    return sample_from(r, rng.random())
""",
        },
    },
    "one_token_distribution": {
        "wrong": {
            "correct rule forgets to weight the residual by P(rejection)": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    if rule == "no_resample":
        return kept + (1 - kept.sum()) * p
    return kept + residual(p, q)
""",
            "greedy compares with the draft's argmax": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(q)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "greedy keeps p[argmax] instead of q[argmax]": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = p[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "greedy keeps min(p, q) at the argmax": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = min(p[m], q[m])
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "greedy falls back to p": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * p
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "no_resample falls back to q": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    fallback = q if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "no_resample treated like the correct rule": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    return kept + (1 - kept.sum()) * residual(p, q)
""",
            "kept mass q * min(1, p/q): nan where p = q = 0": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = q * np.minimum(1.0, p / q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "keep probability inverted: q * min(1, q/p)": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = q * np.minimum(1.0, np.divide(q, p, out=np.ones(len(p)), where=p > 0))
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "greedy keeps the LAST maximum on a tie": ("""
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = len(p) - 1 - int(np.argmax(p[::-1])); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""", "FIRST maximum"),
            "greedy with p == q falls back on a uniform distribution": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        r = np.maximum(p - q, 0)
        r = r / r.sum() if r.sum() > 0 else np.ones(len(p)) / len(p)
        return kept + (1 - kept.sum()) * r
    kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
            "returns a Python list": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.where(np.arange(len(p)) == np.argmax(p), q, 0.0)
    else:
        kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return list(kept + (1 - kept.sum()) * fallback)
""",
            "the output renormalised from the kept mass alone (no rejection branch)": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
    else:
        kept = np.minimum(p, q)
    return kept / kept.sum()
""",
            "through emitted_distribution, with greedy's fallback taken as p": """
def one_token_distribution(p, q, rule="correct"):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if rule == "greedy":
        best = int(np.argmax(p))
        return emitted_distribution(p, q, p, lambda p, q, x: float(x == best))
    return emitted_distribution(p, q, p if rule == "no_resample" else residual(p, q), accept_prob)
""",
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
            "kept + P(reject) * fallback": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.where(np.arange(len(p)) == np.argmax(p), q, 0.0)
    else:
        kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
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
            "kept mass written p * min(1, q/p) (the same min(p, q))": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
        return kept + (1 - kept.sum()) * residual(p, q)
    kept = p * np.minimum(1.0, np.divide(q, p, out=np.ones(len(p)), where=p > 0))
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1 - kept.sum()) * fallback
""",
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
            "the course's one_token_distribution from speclab.onetoken": """
from speclab.onetoken import one_token_distribution as exact_step
def one_token_distribution(p, q, rule="correct"):
    return exact_step(p, q, rule)
""",
            "the widget's helper one_token_parts, summed": """
from speclab import onetoken
def one_token_distribution(p, q, rule="correct"):
    kept, rest = onetoken.one_token_parts(p, q, rule)
    return kept + rest
""",
        },
    },
    "resample_sample": {
        "wrong": {
            "not broken: samples the residual as before": ("""
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(residual(p, q), rng.random())
""", "sampled from p itself"),
            "samples q on rejection": """
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(q, rng.random())
""",
            "drops the accept test (always resamples from p)": """
def resample_sample(p, q, rng):
    sample_from(q, rng.random())
    rng.random()
    return sample_from(p, rng.random())
""",
            "reuses the accept uniform for the p sample": """
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    u = rng.random()
    if u < min(1.0, p[x] / q[x]):
        return x
    return sample_from(p, u)
""",
            "samples p without drafting (no draft uniform)": """
def resample_sample(p, q, rng):
    return sample_from(p, rng.random())
""",
            "p/q inverted in the accept test": """
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, q[x] / p[x]):
        return x
    return sample_from(p, rng.random())
""",
        },
        "right": {
            "speculative_sample with the fallback swapped": """
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(p, rng.random())
""",
            "u * q[x] < p[x], ints": """
def resample_sample(p, q, rng):
    x = int(sample_from(q, rng.random()))
    u = rng.random()
    return x if u * q[x] < p[x] else int(sample_from(p, rng.random()))
""",
        },
        "delegate": {
            "the accept test handed to the course's accept_prob (notebook 02)": """
from speclab import speculative
def resample_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < speculative.accept_prob(p, q, x):
        return x
    return sample_from(p, rng.random())
""",
        },
    },
    "simulated_tv": {
        "wrong": {
            "counts, not frequencies": edit(
                "return 0.5 * float(np.abs(counts / n - np.asarray(p, dtype=float)).sum())",
                "return 0.5 * float(np.abs(counts - p).sum())"),
            "TV without the 0.5": edit(
                "return 0.5 * float(np.abs(counts / n - np.asarray(p, dtype=float)).sum())",
                "return float(np.abs(counts / n - p).sum())"),
            "compares with q instead of p": edit(
                "return 0.5 * float(np.abs(counts / n - np.asarray(p, dtype=float)).sum())",
                "return 0.5 * float(np.abs(counts / n - q).sum())"),
            "one sample too few (range(n - 1))": """
def simulated_tv(sampler, p, q, n, rng):
    counts = np.zeros(len(p))
    for _ in range(n - 1):
        counts[sampler(p, q, rng)] += 1
    return 0.5 * float(np.abs(counts / (n - 1) - p).sum())
""",
            "its own generator instead of rng": """
def simulated_tv(sampler, p, q, n, rng):
    mine = np.random.default_rng(0)
    counts = np.zeros(len(p))
    for _ in range(n):
        counts[sampler(p, q, mine)] += 1
    return 0.5 * float(np.abs(counts / n - p).sum())
""",
            "counts only the tokens that came out (np.unique)": """
def simulated_tv(sampler, p, q, n, rng):
    tokens, counts = np.unique([sampler(p, q, rng) for _ in range(n)], return_counts=True)
    return 0.5 * float(np.abs(counts / n - np.asarray(p)[tokens]).sum())
""",
            "bincount without minlength: never-drawn tokens at the end are dropped": ("""
def simulated_tv(sampler, p, q, n, rng):
    counts = np.bincount([sampler(p, q, rng) for _ in range(n)])
    return 0.5 * float(sum(abs(c / n - x) for c, x in zip(counts, p)))
""", "including the last"),
            "largest single gap instead of the sum": edit(
                "return 0.5 * float(np.abs(counts / n - np.asarray(p, dtype=float)).sum())",
                "return float(np.abs(counts / n - p).max())"),
        },
        "right": {
            "bincount": """
def simulated_tv(sampler, p, q, n, rng):
    draws = [sampler(p, q, rng) for _ in range(n)]
    freq = np.bincount(draws, minlength=len(p)) / n
    return 0.5 * np.abs(freq - p).sum()
""",
            "a dictionary of counts": """
def simulated_tv(sampler, p, q, n, rng):
    seen = {}
    for _ in range(n):
        t = sampler(p, q, rng)
        seen[t] = seen.get(t, 0) + 1
    return sum(abs(seen.get(x, 0) / n - p[x]) for x in range(len(p))) / 2
""",
        },
        "delegate": {
            "the distance handed to the course's tv_distance (notebook 04)": """
from speclab.speculative import tv_distance as tv
def simulated_tv(sampler, p, q, n, rng):
    freq = np.bincount([sampler(p, q, rng) for _ in range(n)], minlength=len(p)) / n
    return tv(freq, p)
""",
        },
    },
    "detection_power": {
        "wrong": {
            "a count of the trials above the threshold, not a share": ("""
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, n, rng) > threshold for _ in range(trials))
""", "a share of the trials, not a count"),
            "the share at or below the threshold (the misses)": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, n, rng) <= threshold for _ in range(trials)) / trials
""",
            "n and trials swapped": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, trials, rng) > threshold for _ in range(n)) / n
""",
            "one count of n * trials tokens, compared once": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return float(simulated_tv(sampler, p, q, n * trials, rng) > threshold)
""",
            "the mean distance compared with the threshold": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    tvs = [simulated_tv(sampler, p, q, n, rng) for _ in range(trials)]
    return float(np.mean(tvs) > threshold)
""",
            "a fresh generator for every count": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(sampler, p, q, n, np.random.default_rng(i)) > threshold for i in range(trials)) / trials
""",
            "the student's own speculative_sample instead of the sampler given": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    return sum(simulated_tv(speculative_sample, p, q, n, rng) > threshold for _ in range(trials)) / trials
""",
            "the share of the trials above the noise floor, ignoring the threshold": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    floor = float(np.sqrt(np.asarray(p) * (1 - np.asarray(p)) / (2 * np.pi * n)).sum())
    return sum(simulated_tv(sampler, p, q, n, rng) > floor for _ in range(trials)) / trials
""",
        },
        "right": {
            "a loop and a counter": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    above = 0
    for _ in range(trials):
        if simulated_tv(sampler, p, q, n, rng) > threshold:
            above += 1
    return above / trials
""",
            "NumPy mean of a boolean array": """
def detection_power(sampler, p, q, n, trials, threshold, rng):
    tvs = np.array([simulated_tv(sampler, p, q, n, rng) for _ in range(trials)])
    return float(np.mean(tvs > threshold))
""",
        },
        "delegate": {
            "the course's tv_distance on its own counts (notebook 04's helper)": """
import speclab.speculative as sp
def detection_power(sampler, p, q, n, trials, threshold, rng):
    above = 0
    for _ in range(trials):
        freq = np.bincount([sampler(p, q, rng) for _ in range(n)], minlength=len(p)) / n
        above += sp.tv_distance(freq, p) > threshold
    return above / trials
""",
        },
    },
}
