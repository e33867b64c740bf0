"""Answers the 03_residual grader must judge: plausible mistakes, and correct variants."""

from devtools.catalog import NUMPY_ATTACK

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
        },
        "right": {
            "clip and divide, p as fallback": """
def residual(p, q):
    r = np.clip(p - q, 0, None)
    return r / r.sum() if r.sum() > 0 else p
""",
            "uniform fallback": """
def residual(p, q):
    r = np.maximum(0.0, np.asarray(p) - np.asarray(q))
    if r.sum() == 0:
        return np.ones(len(p)) / len(p)
    return r / r.sum()
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
        },
        "right": {
            "u < min(1, p/q)": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() < min(1.0, p[x] / q[x]):
        return x
    return sample_from(residual(p, q), rng.random())
""",
            "u <= p/q": """
def speculative_sample(p, q, rng):
    x = sample_from(q, rng.random())
    if rng.random() <= p[x] / q[x]:
        return int(x)
    return int(sample_from(residual(p, q), rng.random()))
""",
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
            "the output renormalised from the kept mass alone (no rejection branch)": """
def one_token_distribution(p, q, rule="correct"):
    if rule == "greedy":
        kept = np.zeros(len(p)); m = int(np.argmax(p)); kept[m] = q[m]
    else:
        kept = np.minimum(p, q)
    return kept / kept.sum()
""",
        },
        "right": {
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
    },
    "no_resample_damage": {
        "wrong": {
            "TV without the 0.5": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "no_resample")
    return float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(d - p > 1e-12)]
""",
            "over-represented = over-proposed (q > p)": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "no_resample")
    return 0.5 * float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(q > p)]
""",
            "under-represented tokens instead of over-represented": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "no_resample")
    return 0.5 * float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(p - d > 1e-12)]
""",
            "measures the correct rule instead of the broken one": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "correct")
    return 0.5 * float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(d - p > 1e-12)]
""",
            "measures the greedy rule": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "greedy")
    return 0.5 * float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(d - p > 1e-12)]
""",
            "compares with q instead of p": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "no_resample")
    return 0.5 * float(np.abs(d - q).sum()), [int(i) for i in np.flatnonzero(d - q > 1e-12)]
""",
            "the broken output taken as min(p, q) + p (no rejection weight)": """
def no_resample_damage(p, q):
    d = np.minimum(p, q) + p
    d = d / d.sum()
    return 0.5 * float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(d - p > 1e-12)]
""",
            "numpy comparisons patched, then TV without the 0.5": NUMPY_ATTACK + """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "no_resample")
    return float(np.abs(d - p).sum()), [int(i) for i in np.flatnonzero(d - p > 1e-12)]
""",
        },
        "right": {
            "via one_token_distribution": """
def no_resample_damage(p, q):
    d = one_token_distribution(p, q, "no_resample")
    return 0.5 * np.abs(d - p).sum(), list(np.flatnonzero(d > p + 1e-12))
""",
            "from the closed form min(p, q) - a p": """
def no_resample_damage(p, q):
    a = np.minimum(p, q).sum()
    gap = np.minimum(p, q) - a * p
    return float(np.maximum(gap, 0).sum()), [x for x in range(len(p)) if gap[x] > 1e-12]
""",
            "strict comparison, returned as an array": """
def no_resample_damage(p, q):
    m = np.minimum(p, q)
    d = m + (1 - m.sum()) * p
    return 0.5 * sum(abs(d - p)), np.nonzero(d - p > 1e-12)[0]
""",
        },
    },
}
