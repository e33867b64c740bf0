"""Answers the 02_acceptance_rule grader must judge: plausible mistakes, and correct variants."""

from devtools.catalog import NUMPY_ATTACK

AID = "02_acceptance_rule"


CATALOG = {
    "accept_prob": {
        "wrong": {
            "p/q inverted": """
def accept_prob(p, q, x):
    return min(1.0, q[x] / p[x])
""",
            "no cap at 1": """
def accept_prob(p, q, x):
    return p[x] / q[x]
""",
            "argmax agreement (greedy)": """
def accept_prob(p, q, x):
    return 1.0 if x == int(np.argmax(p)) else 0.0
""",
            "rejection probability instead of acceptance": """
def accept_prob(p, q, x):
    return max(0.0, 1.0 - p[x] / q[x])
""",
            "forgets q: returns p[x]": """
def accept_prob(p, q, x):
    return min(1.0, p[x])
""",
            "returns the whole vector of ratios": """
def accept_prob(p, q, x):
    return np.minimum(1.0, p / q)
""",
            "max instead of min": """
def accept_prob(p, q, x):
    return max(1.0, p[x] / q[x])
""",
        },
        "right": {
            "the formula": """
def accept_prob(p, q, x):
    return min(1.0, p[x] / q[x])
""",
            "np.minimum, a numpy scalar": """
def accept_prob(p, q, x):
    return np.minimum(1, p[x] / q[x])
""",
            "branch on under/over-proposal": """
def accept_prob(p, q, x):
    if p[x] >= q[x]:
        return 1
    return p[x] / q[x]
""",
            "clip": """
def accept_prob(p, q, x):
    return float(np.clip(np.asarray(p)[x] / np.asarray(q)[x], 0, 1))
""",
        },
    },
    "acceptance_rate": {
        "wrong": {
            "sum of max(p, q)": """
def acceptance_rate(p, q):
    return float(np.maximum(p, q).sum())
""",
            "TV itself, not 1 - TV": """
def acceptance_rate(p, q):
    return 0.5 * float(np.abs(p - q).sum())
""",
            "1 - TV without the 0.5": """
def acceptance_rate(p, q):
    return 1.0 - float(np.abs(p - q).sum())
""",
            "sum of p * q": """
def acceptance_rate(p, q):
    return float((p * q).sum())
""",
            "mean of min(p, q) instead of sum": """
def acceptance_rate(p, q):
    return float(np.minimum(p, q).mean())
""",
            "weights the keep probability by p instead of q": """
def acceptance_rate(p, q):
    return float((p * np.minimum(1, p / q)).sum())
""",
            "q * min(1, p/q): nan where p = q = 0": """
def acceptance_rate(p, q):
    return float((q * np.minimum(1, p / q)).sum())
""",
            "returns the vector min(p, q)": """
def acceptance_rate(p, q):
    return np.minimum(p, q)
""",
            "numpy comparisons patched, then a wrong answer": NUMPY_ATTACK + """
def acceptance_rate(p, q):
    return float(np.maximum(p, q).sum())
""",
        },
        "right": {
            "sum of min": """
def acceptance_rate(p, q):
    return np.minimum(p, q).sum()
""",
            "1 - TV": """
def acceptance_rate(p, q):
    return 1 - 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum()
""",
            "a loop over tokens with accept probabilities, skipping q = 0": """
def acceptance_rate(p, q):
    total = 0.0
    for x in range(len(q)):
        if q[x] > 0:
            total += q[x] * min(1.0, p[x] / q[x])
    return total
""",
        },
    },
    "accept_many": {
        "wrong": {
            "p/q inverted": """
def accept_many(p, q, xs, us):
    return np.asarray(us) < q[xs] / p[xs]
""",
            "rejects below the ratio (comparison flipped)": """
def accept_many(p, q, xs, us):
    return np.asarray(us) > p[xs] / q[xs]
""",
            "forgets q: u < p[x]": """
def accept_many(p, q, xs, us):
    return np.asarray(us) < p[xs]
""",
            "argmax agreement (greedy)": """
def accept_many(p, q, xs, us):
    return np.asarray(xs) == np.argmax(p)
""",
            "returns the keep probabilities, not the decisions": """
def accept_many(p, q, xs, us):
    return np.minimum(1.0, p[xs] / q[xs])
""",
            "returns 0/1 floats": """
def accept_many(p, q, xs, us):
    return (np.asarray(us) < p[xs] / q[xs]).astype(float)
""",
            "one uniform for every token (us[0])": """
def accept_many(p, q, xs, us):
    return us[0] < p[xs] / q[xs]
""",
            "uniforms paired with the wrong tokens (sorted)": """
def accept_many(p, q, xs, us):
    return np.sort(us) < p[xs] / q[xs]
""",
        },
        "right": {
            "u < p/q, vectorised": """
def accept_many(p, q, xs, us):
    return np.asarray(us) < np.asarray(p)[xs] / np.asarray(q)[xs]
""",
            "u <= p/q": """
def accept_many(p, q, xs, us):
    return us <= p[xs] / q[xs]
""",
            "u * q[x] < p[x]": """
def accept_many(p, q, xs, us):
    return us * q[xs] < p[xs]
""",
            "u < min(1, p/q)": """
def accept_many(p, q, xs, us):
    return us < np.minimum(1.0, p[xs] / q[xs])
""",
            "a Python loop into a bool array": """
def accept_many(p, q, xs, us):
    return np.array([u < min(1.0, p[x] / q[x]) for x, u in zip(xs, us)], dtype=bool)
""",
        },
    },
    "survivors": {
        "wrong": {
            "greedy compares with the draft's argmax": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        return np.minimum(p, q)
    out = np.zeros(len(q))
    out[np.argmax(q)] = q[np.argmax(q)]
    return out
""",
            "greedy keeps p[argmax] instead of q[argmax]": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        return np.minimum(p, q)
    out = np.zeros(len(q))
    out[np.argmax(p)] = p[np.argmax(p)]
    return out
""",
            "normalised survivors": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        m = np.minimum(p, q)
        return m / m.sum()
    out = np.zeros(len(q))
    out[np.argmax(p)] = 1.0
    return out
""",
            "correct rule returns p (the final output, not what the accept step keeps)": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        return np.array(p, dtype=float)
    out = np.zeros(len(q))
    out[np.argmax(p)] = q[np.argmax(p)]
    return out
""",
            "correct rule with p/q inverted": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        return q * np.minimum(1.0, q / p)
    out = np.zeros(len(q))
    out[np.argmax(p)] = q[np.argmax(p)]
    return out
""",
            "q * min(1, p/q): nan where p = q = 0": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        return q * np.minimum(1.0, p / q)
    out = np.zeros(len(q))
    out[np.argmax(p)] = q[np.argmax(p)]
    return out
""",
            "greedy keeps every token at least as likely under p as under q": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        return np.minimum(p, q)
    return np.where(p >= q, q, 0.0)
""",
        },
        "right": {
            "min and a one-hot": """
def survivors(p, q, rule="correct"):
    if rule == "greedy":
        m = int(np.argmax(p))
        return q * (np.arange(len(q)) == m)
    return np.minimum(p, q)
""",
            "a loop with accept probabilities, guarding q = 0": """
def survivors(p, q, rule="correct"):
    out = []
    best = int(np.argmax(p))
    for x in range(len(p)):
        if q[x] == 0:
            out.append(0.0)
        elif rule == "greedy":
            out.append(q[x] if x == best else 0.0)
        else:
            out.append(q[x] * min(1.0, p[x] / q[x]))
    return np.array(out)
""",
            "np.where with the ratio": """
def survivors(p, q, rule="correct"):
    if rule == "correct":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(q > 0, q * np.minimum(1.0, p / np.where(q > 0, q, 1.0)), 0.0)
    kept = np.zeros_like(q, dtype=float)
    kept[p.argmax()] = q[p.argmax()]
    return kept
""",
        },
    },
}
