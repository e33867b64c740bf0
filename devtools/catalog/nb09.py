"""Answers the 09_beyond_one_draft grader must judge: plausible mistakes, correct variants, delegations."""
from devtools.catalog import edit

AID = "09_beyond_one_draft"

# Exercise A's rule (candidates drawn with replacement, each tested against the current residual) under
# another exercise's name: a wrong answer to B, which draws without replacement, and to C, the shortcut.
_MSS = """
def {name}(p, q, n, rng):
    cands = [sample_from(q, rng.random()) for _ in range(n)]
    r = p
    for x in cands:
        if rng.random() < r[x] / q[x]:
            return int(x)
        r = residual(r, q)
    return int(sample_from(r, rng.random()))
"""

# The last line of multi_shortcut_tv_formula's reference, which most of its mistakes rewrite.
_FORMULA = "return float(beta * (1 - beta ** (n - 1)) * tv_distance(overlap / overlap.sum(), residual(p, q)))"

CATALOG = {
    "multi_candidate_sample": {
        "wrong": {
            "residual computed once and not updated": (edit(
                ("r = np.asarray(p, dtype=float)", "r, r1 = np.asarray(p, dtype=float), residual(p, q)"),
                ("r = residual(r, q)", "r = r1")), "update the residual after EVERY rejection"),
            "candidates tested against q instead of the current residual": edit(
                "if rng.random() < r[x] / q[x]:", "if rng.random() < q[x] / q[x]:"),
            "every candidate tested against the original p (the break-it's shortcut)": (edit(
                "if rng.random() < r[x] / q[x]:", "if rng.random() < p[x] / q[x]:"), "the second is tested against r_1"),
            "final fallback drawn from p": (edit(
                "return int(sample_from(r, rng.random()))", "return int(sample_from(p, rng.random()))"), "then sample r_2"),
            "final fallback residual(p, q), the first residual": (edit(
                "return int(sample_from(r, rng.random()))",
                "return int(sample_from(residual(p, q), rng.random()))"), "the last one, r_3, is sampled"),
            "each candidate drawn just before its test": (edit(
                ("cands = [sample_from(q, rng.random()) for _ in range(n)]", ""),
                ("for x in cands:", "for _ in range(n):\n    x = sample_from(q, rng.random())")), "draw both candidates first"),
            "residual arguments swapped: residual(q, r)": (edit("r = residual(r, q)", "r = residual(q, r)"), "r_1 = norm(max(0, p - q))"),
            "no uniform for a test that cannot pass (r[x] = 0)": (edit(
                "if rng.random() < r[x] / q[x]:", "if r[x] > 0 and rng.random() < r[x] / q[x]:"), "2n + 1 uniforms"),
            "candidates drawn from p instead of q": edit(
                "cands = [sample_from(q, rng.random()) for _ in range(n)]",
                "cands = [sample_from(p, rng.random()) for _ in range(n)]"),
        },
        "right": {
            "the reference loop with u * q[x] < r[x]": edit("if rng.random() < r[x] / q[x]:", "if rng.random() * q[x] < r[x]:"),
            "u <= min(1, r/q), residual written by hand": """
def multi_candidate_sample(p, q, n, rng):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = []
    for _ in range(n):
        cands.append(sample_from(q, rng.random()))
    r = p.copy()
    for x in cands:
        if rng.random() <= min(1.0, r[x] / q[x]):
            return x
        d = np.maximum(r - q, 0.0)
        r = d / d.sum() if d.sum() > 0 else r
    return sample_from(r, rng.random())
""",
            "every residual computed up front (they do not depend on the candidates)": """
def multi_candidate_sample(p, q, n, rng):
    cands = [sample_from(q, rng.random()) for _ in range(n)]
    rs = [np.asarray(p, dtype=float)]
    for _ in range(n):
        rs.append(residual(rs[-1], q))
    for i, x in enumerate(cands):
        if rng.random() < rs[i][x] / q[x]:
            return int(x)
    return int(sample_from(rs[n], rng.random()))
""",
        },
        "delegate": {
            "calls the course's reference sampler": """
def multi_candidate_sample(p, q, n, rng):
    return candidates.mss_sample(p, q, n, rng)
""",
            "imports the reference under another name": """
from speclab.rules.candidates import mss_sample as _one_token
def multi_candidate_sample(p, q, n, rng):
    return _one_token(p, q, n, rng)
""",
            "reaches it through the module's table of samplers": """
def multi_candidate_sample(p, q, n, rng):
    return candidates.SAMPLERS["mss"](p, q, n, rng)
""",
        },
    },
    "recursive_sample": {
        "wrong": {
            "candidates drawn with replacement (multi-step speculative sampling)": (_MSS.format(name="recursive_sample"), "drawn WITHOUT replacement"),
            "tested with q instead of the distribution the candidate came from": (edit(
                "if rng.random() < r[x] / qi[x]:", "if rng.random() < r[x] / q[x]:"), "tested with that distribution"),
            "residual updated with q instead of q_i": (edit("r = residual(r, qi)", "r = residual(r, q)"), "update r = residual(r, q_i)"),
            "q not renormalised after removing a candidate": (edit("qi = qi / qi.sum()", ""), "removed and renormalised"),
            "only the last candidate removed, not all earlier ones": (edit("qi = qi.copy()", "qi = np.asarray(q, dtype=float).copy()"), "ALL earlier candidates removed"),
            "removes candidates from the caller's q in place": (edit(
                ("qi = np.asarray(q, dtype=float)", "qi = q"),
                ("qi = qi.copy()", "dists[-1] = qi.copy()"),
                ("qi = qi / qi.sum()", "qi /= qi.sum()")), "must not modify q"),
            "final fallback drawn from p": edit("return int(sample_from(r, rng.random()))", "return int(sample_from(p, rng.random()))"),
        },
        "right": {
            "the reference loop with u * q_i[x] < r[x]": edit("if rng.random() < r[x] / qi[x]:", "if rng.random() * qi[x] < r[x]:"),
            "a boolean mask of drawn tokens, u <= ratio, residual by hand": """
def recursive_sample(p, q, n, rng):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    drawn = np.zeros(len(q), dtype=bool)
    cands, dists = [], []
    for _ in range(n):
        qi = np.where(drawn, 0.0, q)
        qi = qi / qi.sum()
        x = sample_from(qi, rng.random())
        cands.append(x)
        dists.append(qi)
        drawn[x] = True
    r = p
    for x, qi in zip(cands, dists):
        if rng.random() <= r[x] / qi[x]:
            return x
        d = np.clip(r - qi, 0.0, None)
        r = d / d.sum() if d.sum() > 0 else r
    return sample_from(r, rng.random())
""",
        },
        "delegate": {
            "calls the course's reference sampler": """
def recursive_sample(p, q, n, rng):
    return candidates.recursive_sample(p, q, n, rng)
""",
            "imports the module under another name": """
import speclab.rules.candidates as _md
def recursive_sample(p, q, n, rng):
    return _md.SAMPLERS["recursive"](p, q, n, rng)
""",
        },
    },
    "shortcut_sample": {
        "wrong": {
            "not broken: the correct rule, residual updated": (_MSS.format(name="shortcut_sample"), "against the original p"),
            "final fallback drawn from p": (edit(
                "return int(sample_from(residual(p, q), rng.random()))",
                "return int(sample_from(p, rng.random()))"), "sample residual(p, q)"),
            "final fallback an updated residual": (edit(
                ("for x in cands:", "r = p\nfor x in cands:"),
                ("if rng.random() < p[x] / q[x]:\n    return int(x)",
                 "if rng.random() < p[x] / q[x]:\n    return int(x)\nr = residual(r, q)"),
                ("return int(sample_from(residual(p, q), rng.random()))", "return int(sample_from(r, rng.random()))")), "not an updated one"),
            "each candidate drawn just before its test": (edit(
                ("cands = [sample_from(q, rng.random()) for _ in range(n)]", ""),
                ("for x in cands:", "for _ in range(n):\n    x = sample_from(q, rng.random())")), "draw both candidates first"),
        },
        "right": {
            "the reference loop with u * q[x] < p[x]": edit("if rng.random() < p[x] / q[x]:", "if rng.random() * q[x] < p[x]:"),
            "u <= min(1, p/q), residual written by hand": """
def shortcut_sample(p, q, n, rng):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = [sample_from(q, rng.random()) for _ in range(n)]
    for x in cands:
        if rng.random() <= min(1.0, p[x] / q[x]):
            return x
    d = np.maximum(p - q, 0.0)
    return sample_from(d / d.sum() if d.sum() > 0 else p, rng.random())
""",
        },
        "delegate": {
            "calls the course's broken reference": """
def shortcut_sample(p, q, n, rng):
    return candidates.shortcut_sample(p, q, n, rng)
""",
        },
    },
    "sampled_tv": {
        "wrong": {
            "TV without the 0.5": (edit("return float(tv_distance(counts / trials, p))",
                                        "return float(np.abs(counts / trials - p).sum())"), "HALF the sum"),
            "counts, not frequencies": edit("return float(tv_distance(counts / trials, p))",
                                            "return float(tv_distance(counts, p))"),
            "distance from the draft q instead of p": edit("return float(tv_distance(counts / trials, p))",
                                                           "return float(tv_distance(counts / trials, q))"),
            "its own shortcut_sample, not the sampler it is given": (edit(
                "counts[sampler(p, q, n, rng)] += 1", "counts[shortcut_sample(p, q, n, rng)] += 1"),
                "one call of the sampler each"),
            "its own seeded generator, not the rng it is given": (edit(
                "counts[sampler(p, q, n, rng)] += 1", "counts[sampler(p, q, n, np.random.default_rng(0))] += 1"),
                "the rng you were given"),
            "one candidate whatever n": (edit("counts[sampler(p, q, n, rng)] += 1", "counts[sampler(p, q, 1, rng)] += 1"),
                                         "the n you were given"),
            "one draw short": (edit("for _ in range(trials):", "for _ in range(trials - 1):"), "one call of the sampler each"),
        },
        "right": {
            "bincount over a list of draws": """
def sampled_tv(sampler, p, q, n, trials, rng):
    draws = [sampler(p, q, n, rng) for _ in range(trials)]
    freq = np.bincount(draws, minlength=len(p)) / trials
    return 0.5 * float(np.abs(freq - np.asarray(p)).sum())
""",
            "a Counter, plain Python": """
from collections import Counter as _Counter
def sampled_tv(sampler, p, q, n, trials, rng):
    seen = _Counter(int(sampler(p, q, n, rng)) for _ in range(trials))
    return 0.5 * sum(abs(seen.get(y, 0) / trials - float(p[y])) for y in range(len(p)))
""",
        },
        "delegate": {
            "the course's measure": """
def sampled_tv(sampler, p, q, n, trials, rng):
    return candidates.sampled_tv(sampler, p, q, n, trials, rng)
""",
            "imported under another name": """
from speclab.rules.candidates import sampled_tv as _measure
def sampled_tv(sampler, p, q, n, trials, rng):
    return _measure(sampler, p, q, n, trials, rng)
""",
        },
    },
    "shortcut_favours": {
        "wrong": {
            "the largest q / p: how much the draft over-proposes": ("""
def shortcut_favours(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    on = p > 0
    return float(np.max(q[on] / p[on]))
""", "the largest q / p"),
            "the factor with two candidates (section 1's count with p held fixed)": ("""
def shortcut_favours(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    beta = 1.0 - kept.sum()
    out = kept + beta * kept + beta ** 2 * residual(p, q)
    on = p > 0
    return float(np.max(out[on] / p[on]))
""", "the factor with two candidates"),
            "the factor with four candidates (the tree section's sum with p held fixed)": ("""
def shortcut_favours(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    beta = 1.0 - kept.sum()
    out = sum(beta ** i for i in range(4)) * kept + beta ** 4 * residual(p, q)
    on = p > 0
    return float(np.max(out[on] / p[on]))
""", "the factor with four candidates"),
            "1 / alpha whatever the tokens": """
def shortcut_favours(p, q):
    alpha = float(np.minimum(p, q).sum())
    return 1.0 / alpha if alpha > 1e-12 else 1.0
""",
            "the ratio taken over every token, p = 0 included": ("""
def shortcut_favours(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    if kept.sum() < 1e-12:
        return 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.max(kept / kept.sum() / p))
""", "has no ratio to p"),
            "the smallest ratio, not the largest": edit("return float(np.max(kept[on] / alpha / p[on]))",
                                                        "return float(np.min(kept[on] / alpha / p[on]))"),
            "the settled output's TV from p, not a factor": edit("return float(np.max(kept[on] / alpha / p[on]))",
                                                                 "return float(0.5 * np.abs(kept / alpha - p).sum())"),
            "the correct rule's factor: 1 whatever the draft": """
def shortcut_favours(p, q):
    return 1.0
""",
            "the course's enumeration at many candidates (a brute force)": ("""
def shortcut_favours(p, q):
    p = np.asarray(p, dtype=float)
    out = candidates.exact_output(p, q, 12, "shortcut")
    on = p > 0
    return float(np.max(out[on] / p[on]))
""", "taken away here"),
        },
        "right": {
            "1 / alpha scaled by min(1, q / p)": """
def shortcut_favours(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    alpha = np.minimum(p, q).sum()
    if alpha < 1e-12:
        return 1.0
    on = p > 0
    return float(np.max(np.minimum(1.0, q[on] / p[on])) / alpha)
""",
            "a plain loop over the tokens": """
def shortcut_favours(p, q):
    alpha = sum(min(a, b) for a, b in zip(p, q))
    if alpha < 1e-12:
        return 1.0
    return max(min(a, b) / alpha / a for a, b in zip(p, q) if a > 0)
""",
        },
        "delegate": {
            "the course's diagnosis under another name": """
from speclab.rules.candidates import shortcut_favours as _favours
def shortcut_favours(p, q):
    return _favours(p, q)
""",
        },
    },
    "multi_shortcut_tv_formula": {
        "wrong": {
            "beta^n instead of beta^(n-1)": (edit(
                _FORMULA,
                "return float(beta * (1 - beta ** n) * tv_distance(overlap / overlap.sum(), residual(p, q)))"),
                "with one candidate the shortcut is the correct rule"),
            "the leading beta missing": (edit(
                _FORMULA,
                "return float((1 - beta ** (n - 1)) * tv_distance(overlap / overlap.sum(), residual(p, q)))"), "the shortcut's exact output"),
            "min(p, q) not normalised": (edit(
                _FORMULA,
                "return float(beta * (1 - beta ** (n - 1)) * tv_distance(overlap, residual(p, q)))"), "the shortcut's exact output"),
            "beta taken as the acceptance, sum(min(p, q))": (edit('''
beta = 1.0 - overlap.sum()
if beta < 1e-12 or beta > 1 - 1e-12:
''', '''
beta = overlap.sum()
if beta >= 1:
'''), "the shortcut's exact output"),
            "TV against p instead of the residual": edit(
                _FORMULA,
                "return float(beta * (1 - beta ** (n - 1)) * tv_distance(overlap / overlap.sum(), p))"),
            "TV without the 0.5": edit(
                _FORMULA,
                "return float(beta * (1 - beta ** (n - 1)) * np.abs(overlap / overlap.sum() - residual(p, q)).sum())"),
            "no guard: a draft equal to the target divides by zero": (edit(
                ("if beta < 1e-12 or beta > 1 - 1e-12:\n    return 0.0", "r = np.clip(p - q, 0.0, None)\nr = r / r.sum()"),
                (_FORMULA,
                 "return float(beta * (1 - beta ** (n - 1)) * tv_distance(overlap / overlap.sum(), r))")), "beta = 0"),
            "beta compared with 0 exactly (no tolerance), own residual": (edit(
                ("if beta < 1e-12 or beta > 1 - 1e-12:\n    return 0.0",
                 "if beta == 0 or beta == 1:\n    return 0.0\nr = np.clip(p - q, 0.0, None)\nr = r / r.sum()"),
                (_FORMULA, "return float(beta * (1 - beta ** (n - 1)) * tv_distance(overlap / overlap.sum(), r))")),
                "beta = 0"),
            "the enumeration helper, not the closed form": ("""
def multi_shortcut_tv_formula(p, q, n):
    def walk(p, q, cands):
        out, reached = np.zeros(len(p)), 1.0
        for x in cands:
            keep = min(1.0, p[x] / q[x])
            out[x] += reached * keep
            reached *= 1.0 - keep
        return out + reached * residual(p, q)
    return float(tv_distance(enumerate_output(p, q, n, walk), p))
""", "asks for the closed form"),
        },
        "right": {
            "plain Python, no numpy": """
def multi_shortcut_tv_formula(p, q, n):
    p, q = [float(v) for v in p], [float(v) for v in q]
    ov = [min(a, b) for a, b in zip(p, q)]
    beta = 1.0 - sum(ov)
    if beta <= 1e-15 or beta >= 1:
        return 0.0
    d = [max(0.0, a - b) for a, b in zip(p, q)]
    return beta * (1 - beta ** (n - 1)) * 0.5 * sum(abs(o / sum(ov) - x / sum(d)) for o, x in zip(ov, d))
""",
            "the geometric sum written out": edit(
                _FORMULA,
                "factor = sum(beta ** i for i in range(1, n))  # beta + ... + beta^(n-1), times (1 - beta)\n"
                "return float((1 - beta) * factor * tv_distance(overlap / (1 - beta), residual(p, q)))"),
        },
        "delegate": {
            "the course's closed form": """
def multi_shortcut_tv_formula(p, q, n):
    return candidates.shortcut_tv_formula(p, q, n)
""",
            "the course's exact enumeration instead": """
from speclab.rules.candidates import exact_output as _exact
def multi_shortcut_tv_formula(p, q, n):
    return float(tv_distance(_exact(p, q, n, "shortcut"), p))
""",
        },
    },
}
