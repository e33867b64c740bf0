"""Answers the 02_acceptance_rule grader must judge: plausible mistakes, and correct variants.
Long because it is a table: one entry per mistake the grader is held to."""

from devtools.catalog import NUMPY_ATTACK, edit

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
            "a one-element array instead of a number": ("""
def accept_prob(p, q, x):
    return np.minimum(1.0, p[[x]] / q[[x]])
""", "single number"),
            "max instead of min": """
def accept_prob(p, q, x):
    return max(1.0, p[x] / q[x])
""",
        },
        "delegate": {
            "the course's reference, imported under another name": """
from speclab.rules.speculative import accept_prob as keep_chance
def accept_prob(p, q, x):
    return keep_chance(p, q, x)
""",
            "the reference through the notebook's `ref` module": """
def accept_prob(p, q, x):
    return ref.accept_prob(p, q, x)
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
            "a one-element array instead of a number": ("""
def acceptance_rate(p, q):
    return np.minimum(p, q).sum(keepdims=True)
""", "single number"),
            "returns the vector min(p, q)": """
def acceptance_rate(p, q):
    return np.minimum(p, q)
""",
            "numpy comparisons patched, then a wrong answer": NUMPY_ATTACK + """
def acceptance_rate(p, q):
    return float(np.maximum(p, q).sum())
""",
        },
        "delegate": {
            "the course's reference through a module attribute": """
import speclab
def acceptance_rate(p, q):
    return speclab.rules.speculative.acceptance_rate(p, q)
""",
            "another notebook's helper: 1 minus the course's tv_distance": """
from speclab.rules.speculative import tv_distance as distance
def acceptance_rate(p, q):
    return 1.0 - distance(p, q)
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
            "returns a list of bools, not an array": ("""
def accept_many(p, q, xs, us):
    return [bool(u < p[x] / q[x]) for x, u in zip(xs, us)]
""", "not a list"),
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
        "delegate": {
            "a loop over the course's reference accept_prob": """
from speclab.rules import speculative as S
def accept_many(p, q, xs, us):
    return np.array([u < S.accept_prob(p, q, x) for x, u in zip(xs, us)], dtype=bool)
""",
        },
        "right": {
            "u < p/q, vectorised": edit("xs = np.asarray(xs)", ""),
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
    "swapped_accept_prob": {
        "wrong": {
            "not broken: the correct ratio p/q": ("""
def swapped_accept_prob(p, q, x):
    return min(1.0, p[x] / q[x])
""", "the correct rule's keep probability"),
            "upside down but no cap at 1": """
def swapped_accept_prob(p, q, x):
    return q[x] / p[x] if p[x] > 0 else 1.0
""",
            "plain Python division: fails where p[x] = 0": ("""
def swapped_accept_prob(p, q, x):
    return min(1.0, float(q[x]) / float(p[x]))
""", "infinite"),
            "returns 0 where p[x] = 0": ("""
def swapped_accept_prob(p, q, x):
    if p[x] == 0:
        return 0.0
    return min(1.0, q[x] / p[x])
""", "infinite"),
            "keeps with q[x] (the draft's probability)": """
def swapped_accept_prob(p, q, x):
    return float(q[x])
""",
            "keeps with p[x] (the target's probability)": """
def swapped_accept_prob(p, q, x):
    return float(p[x])
""",
            "the rejection probability of the correct rule": """
def swapped_accept_prob(p, q, x):
    return max(0.0, 1.0 - p[x] / q[x])
""",
            "returns the whole vector of ratios": """
def swapped_accept_prob(p, q, x):
    return np.minimum(1.0, q / p)
""",
        },
        "right": {
            "numpy division (inf where p = 0) then min": """
def swapped_accept_prob(p, q, x):
    with np.errstate(divide="ignore"):
        return float(np.minimum(1.0, np.float64(q[x]) / np.float64(p[x])))
""",
            "branch on over/under-proposal": """
def swapped_accept_prob(p, q, x):
    if q[x] >= p[x]:
        return 1
    return q[x] / p[x]
""",
            "u * p < q form, as a probability": """
def swapped_accept_prob(p, q, x):
    return 1.0 if p[x] <= q[x] else float(q[x]) / float(p[x])
""",
        },
        "delegate": {
            "the course's broken reference": """
from speclab.views.onetoken import swapped_accept_prob as upside_down
def swapped_accept_prob(p, q, x):
    return upside_down(p, q, x)
""",
            "the correct reference with the arguments swapped": """
def swapped_accept_prob(p, q, x):
    return ref.accept_prob(q, p, x) if p[x] > 0 else 1.0
""",
        },
    },
    "emitted_distribution": {
        "wrong": {
            "forgets the fallback: returns only the kept part": ("""
def emitted_distribution(p, q, r, accept):
    return np.array([q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
""", "exactly p"),
            "weights the fallback by the keep rate instead of the rejection rate": """
def emitted_distribution(p, q, r, accept):
    kept = np.array([q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
    return kept + kept.sum() * np.asarray(r)
""",
            "kept part weighted by p instead of q": """
def emitted_distribution(p, q, r, accept):
    kept = np.array([p[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
    return kept + (1 - kept.sum()) * np.asarray(r)
""",
            "normalises the kept part instead of adding the fallback": """
def emitted_distribution(p, q, r, accept):
    kept = np.array([q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
    return kept / kept.sum()
""",
            "ignores accept: always the correct rule": ("""
def emitted_distribution(p, q, r, accept):
    kept = np.minimum(p, q)
    return kept + (1 - kept.sum()) * np.asarray(r)
""", "keeps every guess"),
            "ignores r: falls back on p": """
def emitted_distribution(p, q, r, accept):
    kept = np.array([q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
    return kept + (1 - kept.sum()) * np.asarray(p)
""",
            "computes its own residual instead of using r": ("""
def emitted_distribution(p, q, r, accept):
    kept = np.array([q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
    gap = np.maximum(np.asarray(p) - np.asarray(q), 0)
    return kept + (1 - kept.sum()) * gap / gap.sum()
""", "use the fallback r you are given"),
            "calls accept on tokens the draft never proposes": ("""
def emitted_distribution(p, q, r, accept):
    kept = np.array([q[x] * accept(p, q, x) for x in range(len(q))])
    return kept + (1 - kept.sum()) * np.asarray(r)
""", "only for tokens the draft can propose"),
            "the rejected mass spread evenly instead of by r": """
def emitted_distribution(p, q, r, accept):
    kept = np.array([q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))])
    return kept + (1 - kept.sum()) / len(q)
""",
            "returns a list": ("""
def emitted_distribution(p, q, r, accept):
    kept = [q[x] * accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))]
    rest = 1 - sum(kept)
    return [k + rest * f for k, f in zip(kept, r)]
""", "NumPy array"),
        },
        "right": {
            "a loop, then one vector expression": """
def emitted_distribution(p, q, r, accept):
    kept = np.zeros(len(q))
    for x in np.flatnonzero(np.asarray(q) > 0):
        kept[x] = q[x] * accept(p, q, x)
    return kept + (1 - kept.sum()) * np.asarray(r, dtype=float)
""",
            "keep probabilities first, zero where q = 0": """
def emitted_distribution(p, q, r, accept):
    a = np.array([accept(p, q, x) if q[x] > 0 else 0.0 for x in range(len(q))], dtype=float)
    reject = 1.0 - float(np.dot(q, a))
    return np.asarray(q) * a + reject * np.asarray(r)
""",
        },
        "delegate": {
            "the course's reference": """
import speclab.views.onetoken as one
def emitted_distribution(p, q, r, accept):
    return one.emitted_distribution(p, q, r, accept)
""",
        },
    },
    "counter_shortfall": {
        "wrong": {
            "the transcription: one guess's gap, the swapped test's keep rate minus sum min(p, q), k ignored": ("""
def counter_shortfall(p, q, k):
    kept = sum(q[x] * (1.0 if p[x] == 0 else min(1.0, q[x] / p[x])) for x in range(len(p)) if q[x] > 0)
    return float(kept) - float(np.minimum(p, q).sum())
""", "as if k were 1"),
            "k times one guess's gap: every guess judged, after a rejection too": (edit(
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 1))",
                "return k * (kept_swapped - kept)"), "as if every guess were judged"),
            "the gap in the share of rounds that keep every guess": (edit(
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 1))",
                "return kept_swapped ** k - kept ** k"), "the share of rounds that keep all k"),
            "the powers counted from 0 to k - 1": edit(
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 1))",
                "return sum(kept_swapped ** j - kept ** j for j in range(k))"),
            "the powers counted to k + 1": edit(
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 1))",
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 2))"),
            "the gap the wrong way round: the swapped counter minus the correct one": (edit(
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 1))",
                "return sum(kept ** j - kept_swapped ** j for j in range(1, k + 1))"), "the team's the lower"),
            "what the team's counter itself reads": edit(
                "return sum(kept_swapped ** j - kept ** j for j in range(1, k + 1))",
                "return k - sum(kept_swapped ** j for j in range(1, k + 1))"),
            "no shortfall: both counters assumed to read the same": ("""
def counter_shortfall(p, q, k):
    return 0.0
""", "as if the two counters agreed"),
            "the squared gap over q instead of p": edit(
                ("under = q < p", "under = (q < p) & (q > 0)"),
                ("kept_swapped = kept + float(((p[under] - q[under]) ** 2 / p[under]).sum())",
                 "kept_swapped = kept + float(((p[under] - q[under]) ** 2 / q[under]).sum())")),
            "the gap not squared: the rejections not weighted by how often the token is drafted": edit(
                "kept_swapped = kept + float(((p[under] - q[under]) ** 2 / p[under]).sum())",
                "kept_swapped = kept + float(((p[under] - q[under]) / p[under]).sum())"),
            "a token the target never emits counted as always rejected by the swapped test": ("""
def counter_shortfall(p, q, k):
    a = float(np.minimum(p, q).sum())
    b = sum(q[x] * min(1.0, q[x] / p[x]) for x in range(len(p)) if p[x] > 0)
    return sum(b ** j - a ** j for j in range(1, k + 1))
"""),
            "the geometric sum's closed form, nan for a draft equal to the target": ("""
def counter_shortfall(p, q, k):
    a = float(np.minimum(p, q).sum())
    b = sum(q[x] * (1.0 if p[x] == 0 else min(1.0, q[x] / p[x])) for x in range(len(p)) if q[x] > 0)
    return b * (1 - b ** k) / (1 - b) - a * (1 - a ** k) / (1 - a)
""", "division by zero"),
            "the correct keep rate from the student's acceptance_rate (not available to the Diagnose)": ("""
def counter_shortfall(p, q, k):
    a = float(acceptance_rate(p, q))
    under = q < p
    b = a + float(((p[under] - q[under]) ** 2 / p[under]).sum())
    return sum(b ** j - a ** j for j in range(1, k + 1))
""", "acceptance_rate is not available in the Diagnose"),
            "the student's own swapped test, weighted by the draft (not available to the Diagnose)": ("""
def counter_shortfall(p, q, k):
    b = float(sum(q[x] * swapped_accept_prob(p, q, x) for x in range(len(p)) if q[x] > 0))
    a = float(np.minimum(p, q).sum())
    return sum(b ** j - a ** j for j in range(1, k + 1))
""", "swapped_accept_prob is not available in the Diagnose"),
        },
        "right": {
            "the two throw-away counts, each counted from p and q": """
def counter_shortfall(p, q, k):
    a = float(np.minimum(p, q).sum())
    b = sum(q[x] * (1.0 if p[x] == 0 else min(1.0, q[x] / p[x])) for x in range(len(p)) if q[x] > 0)
    thrown = k - sum(a ** j for j in range(1, k + 1))
    thrown_swapped = k - sum(b ** j for j in range(1, k + 1))
    return thrown - thrown_swapped
""",
            "round by round: the chance that guess j is still alive, multiplied up": """
def counter_shortfall(p, q, k):
    a = b = 0.0
    for x in range(len(p)):
        a += min(p[x], q[x])
        if q[x] > 0:
            b += q[x] if p[x] <= q[x] else q[x] * q[x] / p[x]
    total, alive_a, alive_b = 0.0, 1.0, 1.0
    for _ in range(k):
        alive_a, alive_b = alive_a * a, alive_b * b
        total += alive_b - alive_a
    return total
""",
        },
        "delegate": {
            "the geometric sums from the course's expected_tokens (notebook 05)": """
from speclab.speed import costs as _c
def counter_shortfall(p, q, k):
    a = float(np.minimum(p, q).sum())
    b = sum(q[x] * (1.0 if p[x] == 0 else min(1.0, q[x] / p[x])) for x in range(len(p)) if q[x] > 0)
    return float(_c.expected_tokens(b, k)) - float(_c.expected_tokens(a, k))
""",
        },
    },
}
