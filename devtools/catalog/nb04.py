"""Answers the 04_tv_distance grader must judge: plausible mistakes, and correct variants.
Long because it is a table: one entry per mistake the grader is held to."""

from devtools.catalog import NUMPY_ATTACK, edit

AID = "04_tv_distance"

# The correct round, written so that each wrong variant below is a small, visible edit of it.
_ROUND = """
def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    prefixes = [ctx] + list(drafted)
    out = []
    for i, x in enumerate(drafted):
        p, q = P[prefixes[i]], Q[prefixes[i]]
        if rule == "greedy":
            kept = x == int(np.argmax(p))
        else:
            kept = rng.random() < p[x] / q[x]
        if kept:
            out.append(int(x))
            continue
        out.append(sample_from(p if rule == "no_resample" else residual(p, q), rng.random()))
        if rule == "continue":
            out.extend(int(d) for d in drafted[i + 1:])
        return out
    out.append(sample_from(P[prefixes[-1]], rng.random()))
    return out
"""


def _edit(*pairs):
    """The correct round with each (old, new) replaced once; fails loudly if `old` is not there."""
    src = _ROUND
    for old, new in pairs:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src


_BONUS = "    out.append(sample_from(P[prefixes[-1]], rng.random()))\n    return out\n"
_FIX = "        out.append(sample_from(p if rule == \"no_resample\" else residual(p, q), rng.random()))\n"


# Exercise D's answer in the form its mistakes take: a loop over the round's outcomes, where the
# reference indexes them all at once; each entry below edits one line of it.
_LOOP3 = """
def three_token_tv(P, Q, ctx, k, rule="correct"):
    V = len(P)
    tokens, _, prob = round_outcomes(P, Q, ctx, k, rule)
    M1 = first_token_marginal(P, Q, rule)
    J2 = [first_two_probabilities(P, Q, x, k, rule) for x in range(V)]
    J = np.zeros((V, V, V))
    for row, w in zip(tokens, prob):
        out = row[row >= 0]
        if len(out) >= 3:
            J[out[0], out[1], out[2]] += w
        elif len(out) == 2:
            J[out[0], out[1]] += w * M1[out[1]]
        else:
            J[out[0]] += w * J2[out[0]]
    T = P[ctx][:, None, None] * P[:, :, None] * P[None, :, :]
    return 0.5 * float(np.abs(J - T).sum())
"""

CATALOG = {
    "tv_distance": {
        "wrong": {
            "without the 0.5": """
def tv_distance(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).sum())
""",
            "without the 0.5, after patching numpy's comparisons": NUMPY_ATTACK + """
def tv_distance(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).sum())
""",
            "largest single difference": """
def tv_distance(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())
""",
            "no absolute value": """
def tv_distance(a, b):
    return 0.5 * float((np.asarray(a) - np.asarray(b)).sum())
""",
            "Euclidean distance": """
def tv_distance(a, b):
    return 0.5 * float(np.linalg.norm(np.ravel(a) - np.ravel(b)))
""",
            "row by row on a 2-D array (returns an array)": """
def tv_distance(a, b):
    return 0.5 * np.abs(np.asarray(a) - np.asarray(b)).sum(axis=-1)
""",
            "first row only of a 2-D array": """
def tv_distance(a, b):
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    return 0.5 * float(np.abs(a[0] - b[0]).sum())
""",
        },
        "right": {
            "numpy, one line": """
def tv_distance(a, b):
    return 0.5 * np.abs(np.subtract(a, b)).sum()
""",
            "plain Python over the flattened arrays": """
def tv_distance(a, b):
    total = 0.0
    for x, y in zip(np.ravel(a), np.ravel(b)):
        total += abs(x - y)
    return total / 2
""",
            "L1 norm": """
def tv_distance(a, b):
    return float(np.linalg.norm(np.ravel(a) - np.ravel(b), 1)) / 2
""",
            "arrays subtracted directly, as the text allows": """
def tv_distance(a, b):
    return 0.5 * np.abs(a - b).sum()
""",
        },
        "delegate": {
            "the course's tv_distance under another name": """
from speclab.rules.speculative import tv_distance as course_tv
def tv_distance(a, b):
    return course_tv(a, b)
""",
            "the course's tv_distance through a module attribute": """
import speclab.rules.speculative as S
def tv_distance(a, b):
    return S.tv_distance(a, b)
""",
        },
    },
    "verify_round": {
        "wrong": {
            "off-by-one prefix: verifies drafted[i] against P[drafted[i]]": _edit(
                ("p, q = P[prefixes[i]], Q[prefixes[i]]", "p, q = P[x], Q[x]")),
            "bonus token missing": _edit((_BONUS, "    return out\n")),
            "bonus token from the draft q": _edit(
                ("out.append(sample_from(P[prefixes[-1]], rng.random()))",
                 "out.append(sample_from(Q[prefixes[-1]], rng.random()))")),
            "bonus token from the context's row": _edit(
                ("out.append(sample_from(P[prefixes[-1]], rng.random()))",
                 "out.append(sample_from(P[ctx], rng.random()))")),
            "bonus token from the prefix before the last draft": _edit(
                ("out.append(sample_from(P[prefixes[-1]], rng.random()))",
                 "out.append(sample_from(P[prefixes[-2]], rng.random()))")),
            "bonus token duplicated": _edit(
                (_BONUS, "    out.append(sample_from(P[prefixes[-1]], rng.random()))\n" + _BONUS)),
            "bonus token also after a rejection": _edit(
                ("            out.extend(int(d) for d in drafted[i + 1:])\n        return out\n",
                 "            out.extend(int(d) for d in drafted[i + 1:])\n"
                 "        out.append(sample_from(P[prefixes[i + 1]], rng.random()))\n        return out\n")),
            "drafts kept after a rejection": _edit(
                ("        if rule == \"continue\":\n            out.extend(int(d) for d in drafted[i + 1:])\n",
                 "        out.extend(int(d) for d in drafted[i + 1:])\n")),
            "does not stop at the first rejection (tests every draft)": _edit(
                ("            out.extend(int(d) for d in drafted[i + 1:])\n        return out\n",
                 "            out.extend(int(d) for d in drafted[i + 1:])\n        continue\n")),
            "resamples from p instead of the residual": _edit(
                (_FIX, "        out.append(sample_from(p, rng.random()))\n")),
            "resamples from q": _edit(
                (_FIX, "        out.append(sample_from(q, rng.random()))\n")),
            "residual not renormalised": _edit(
                (_FIX, "        out.append(sample_from(np.clip(p - q, 0, None), rng.random()))\n")),
            "residual not clipped": _edit(
                (_FIX, "        out.append(sample_from((p - q) / np.abs(p - q).sum(), rng.random()))\n")),
            "p/q inverted": _edit(("kept = rng.random() < p[x] / q[x]", "kept = rng.random() < q[x] / p[x]")),
            "accept test reversed (keeps when u >= p/q)": _edit(
                ("kept = rng.random() < p[x] / q[x]", "kept = rng.random() >= p[x] / q[x]")),
            "greedy acceptance as the correct rule": _edit(
                ("        if rule == \"greedy\":\n", "        if True:\n")),
            "accept test compares u with p[x] alone": _edit(
                ("kept = rng.random() < p[x] / q[x]", "kept = rng.random() < p[x]")),
            "the rejected draft is emitted instead of a residual sample": _edit(
                (_FIX, "        out.append(int(x))\n")),
            "returns a tuple instead of a list": _edit(
                ("        return out\n    out.append", "        return tuple(out)\n    out.append"),
                ("    out.append(sample_from(P[prefixes[-1]], rng.random()))\n    return out\n",
                 "    out.append(sample_from(P[prefixes[-1]], rng.random()))\n    return tuple(out)\n")),
            "residual sampled with the accept test's uniform": _edit(
                ("            kept = rng.random() < p[x] / q[x]\n",
                 "            u = rng.random()\n            kept = u < p[x] / q[x]\n"),
                (_FIX, "        out.append(sample_from(residual(p, q), u))\n")),
        },
        "right": {
            "the reference": _ROUND,
            "u <= p/q": _edit(("kept = rng.random() < p[x] / q[x]", "kept = rng.random() <= p[x] / q[x]")),
            "u * q[x] < p[x]": _edit(("kept = rng.random() < p[x] / q[x]", "kept = rng.random() * q[x] < p[x]")),
            "min(1, p/q) via accept_prob": _edit(
                ("kept = rng.random() < p[x] / q[x]", "kept = rng.random() < accept_prob(p, q, x)")),
            "own residual with a uniform fallback": _edit(
                (_FIX, "        r = np.maximum(p - q, 0)\n"
                       "        r = r / r.sum() if r.sum() > 0 else np.ones(len(p)) / len(p)\n"
                       "        out.append(sample_from(p if rule == \"no_resample\" else r, rng.random()))\n")),
            "searchsorted instead of sample_from, all rows looked up first": """
def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    drafted = np.asarray(drafted)
    rows = np.concatenate([[ctx], drafted])
    ps, qs = np.asarray(P)[rows], np.asarray(Q)[rows]     # the k + 1 distributions of one target call

    def draw(dist):
        return int(np.searchsorted(np.cumsum(dist), rng.random(), side="right"))

    out = []
    for i, x in enumerate(drafted.tolist()):
        p, q = ps[i], qs[i]
        if rule == "greedy":
            ok = x == p.argmax()
        else:
            ok = rng.random() * q[x] < p[x]
        if ok:
            out.append(x)
            continue
        if rule == "no_resample":
            out.append(draw(p))
        else:
            r = np.clip(p - q, 0, None)
            out.append(draw(r / r.sum()))
        if rule == "continue":
            out += drafted[i + 1:].tolist()
        return out
    return out + [draw(ps[-1])]
""",
        },
        "delegate": {
            "the course's verify_round under another name": """
from speclab.rules.speculative import verify_round as course_round
def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    return course_round(P, Q, ctx, drafted, rng, rule)
""",
            "the course's verify_round, reached through speclab.decoding.sweeps (notebook 05's loop)": """
from speclab.decoding import sweeps
def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    return sweeps.verify_round(P, Q, ctx, drafted, rng, rule)
""",
            "the course's one round (verify_drafts) on its table rows": """
from speclab.rules.speculative import TableRows, verify_drafts
def verify_round(P, Q, ctx, drafted, rng, rule="correct"):
    return verify_drafts(drafted, TableRows(P, Q, [ctx] + list(drafted)), rng, rule)[0]
""",
        },
    },
    "speculative_joint": {
        "wrong": {
            "counts, not frequencies": edit("return counts / trials", "return counts"),
            "transposed": edit("counts[out[0], out[1]] += 1", "counts[out[1], out[0]] += 1"),
            "the next round restarts from ctx": edit(
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)\nt = out[-1]",
                "out += verify_round(P, Q, ctx, draft_tokens(Q, ctx, k, rng), rng, rule)"),
            "the rule is not passed on": edit(
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)",
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)"),
            "second token straight from the target when a round emits one": edit('''
while len(out) < 2:
    out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)
    t = out[-1]
''', '''
out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)
if len(out) < 2:
    out.append(sample_from(P[out[0]], rng.random()))
'''),
            "one draft reused for the second round": edit(
                ("out, t = [], ctx", "out, t, d = [], ctx, draft_tokens(Q, ctx, k, rng)"),
                ("out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)", "out += verify_round(P, Q, t, d, rng, rule)")),
            "drafts k - 1 tokens": edit(
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)",
                "out += verify_round(P, Q, t, draft_tokens(Q, t, max(1, k - 1), rng), rng, rule)"),
            "its own generator instead of rng": edit(("counts = np.zeros((len(P), len(P)))", '''
mine = np.random.default_rng(0)
counts = np.zeros((len(P), len(P)))
'''), ("out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)", "out += verify_round(P, Q, t, draft_tokens(Q, t, k, mine), mine, rule)")),
            "the last two tokens of the first round": edit("counts[out[0], out[1]] += 1", "counts[out[-2], out[-1]] += 1"),
        },
        "right": {
            "the reference": """
def speculative_joint(P, Q, ctx, k, trials, rng, rule="correct"):
    counts = np.zeros((len(P), len(P)))
    for _ in range(trials):
        out, t = [], ctx
        while len(out) < 2:
            out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)
            t = out[-1]
        counts[out[0], out[1]] += 1
    return counts / trials
""",
            "a Counter of pairs": """
from collections import Counter

def speculative_joint(P, Q, ctx, k, trials, rng, rule="correct"):
    pairs = Counter()
    for _ in range(trials):
        emitted = []
        while len(emitted) < 2:
            t = emitted[-1] if emitted else ctx
            emitted.extend(verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule=rule))
        pairs[tuple(emitted[:2])] += 1
    J = np.zeros((len(P), len(P)))
    for (x, y), n in pairs.items():
        J[x, y] = n / trials
    return J
""",
            "np.add.at after collecting the pairs": """
def speculative_joint(P, Q, ctx, k, trials, rng, rule="correct"):
    firsts, seconds = [], []
    for _ in range(trials):
        out = verify_round(P, Q, ctx, draft_tokens(Q, ctx, k, rng), rng, rule)
        while len(out) < 2:
            t = out[-1]
            out = out + verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)
        firsts.append(out[0])
        seconds.append(out[1])
    J = np.zeros((len(P), len(P)))
    np.add.at(J, (np.array(firsts), np.array(seconds)), 1.0 / trials)
    return J
""",
        },
        "delegate": {
            "the course's speculative_joint under another name": """
from speclab.rules.speculative import speculative_joint as course_joint
def speculative_joint(P, Q, ctx, k, trials, rng, rule="correct"):
    return course_joint(P, Q, ctx, k, trials, rng, rule)
""",
            "the course's first_two_tokens for each trial": """
from speclab.rules import speculative
def speculative_joint(P, Q, ctx, k, trials, rng, rule="correct"):
    J = np.zeros((len(P), len(P)))
    for _ in range(trials):
        x, y = speculative.first_two_tokens(P, Q, ctx, k, rng, rule)
        J[x, y] += 1 / trials
    return J
""",
        },
    },
    "speculative_joint3": {
        "wrong": {
            "counts, not frequencies": (edit("return counts / trials", "return counts"), "should sum to 1"),
            "every round restarts from ctx": (edit(
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)\nt = out[-1]",
                "out += verify_round(P, Q, ctx, draft_tokens(Q, ctx, k, rng), rng, rule)"), "the two Exercise C keeps"),
            "the third token straight from the target when the first round emits two": (edit(
                ("while len(out) < 3:", "while len(out) < 2:"),
                ("counts[out[0], out[1], out[2]] += 1",
                 "if len(out) < 3:\n    out.append(sample_from(P[out[-1]], rng.random()))\ncounts[out[0], out[1], out[2]] += 1")), "NEXT round"),
            "the rule is not passed on": edit(
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)",
                "out += verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng)"),
            "axes reversed (z, y, x)": edit("counts[out[0], out[1], out[2]] += 1", "counts[out[2], out[1], out[0]] += 1"),
            "still the two-token window, spread over a third axis": edit(
                ("while len(out) < 3:", "while len(out) < 2:"),
                ("counts[out[0], out[1], out[2]] += 1", "counts[out[0], out[1], :] += 1 / 6")),
            "the first round's last three tokens": edit("counts[out[0], out[1], out[2]] += 1", "counts[out[-3], out[-2], out[-1]] += 1"),
        },
        "right": {
            "speculative_joint with a third token": edit(('''
V = len(P)
counts = np.zeros((V, V, V))
''', "counts = np.zeros((len(P),) * 3)"), ("counts[out[0], out[1], out[2]] += 1", "counts[tuple(out[:3])] += 1")),
            "a Counter of triples": """
from collections import Counter

def speculative_joint3(P, Q, ctx, k, trials, rng, rule="correct"):
    seen = Counter()
    for _ in range(trials):
        emitted = []
        while len(emitted) < 3:
            t = emitted[-1] if emitted else ctx
            emitted.extend(verify_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule=rule))
        seen[tuple(emitted[:3])] += 1
    J = np.zeros((6, 6, 6))
    for triple, n in seen.items():
        J[triple] = n / trials
    return J
""",
        },
        "delegate": {
            "the course's verify_round instead of the student's own": """
from speclab.rules.speculative import verify_round as course_round
def speculative_joint3(P, Q, ctx, k, trials, rng, rule="correct"):
    counts = np.zeros((6, 6, 6))
    for _ in range(trials):
        out, t = [], ctx
        while len(out) < 3:
            out += course_round(P, Q, t, draft_tokens(Q, t, k, rng), rng, rule)
            t = out[-1]
        counts[out[0], out[1], out[2]] += 1
    return counts / trials
""",
        },
    },
    "three_token_tv": {
        "wrong": {
            "TV without the 0.5": edit(
                "return 0.5 * float(np.abs(J - T).sum())",
                "return float(np.abs(J - T).sum())", base=_LOOP3),
            "the target's three tokens taken as independent draws from P[ctx]": edit(
                "T = P[ctx][:, None, None] * P[:, :, None] * P[None, :, :]",
                '''
p = P[ctx]
T = p[:, None, None] * p[None, :, None] * p[None, None, :]
''', base=_LOOP3),
            "after a two-token round, the third token from the target instead of a new round": edit(
                "J[out[0], out[1]] += w * M1[out[1]]",
                "J[out[0], out[1]] += w * P[out[1]]", base=_LOOP3),
            "after a one-token round, the next two from the target instead of new rounds": edit(
                "J[out[0]] += w * J2[out[0]]",
                "J[out[0]] += w * P[out[0]][:, None] * P", base=_LOOP3),
            "the continuation always from ctx": edit(
                ("J2 = [first_two_probabilities(P, Q, x, k, rule) for x in range(V)]", "J2 = first_two_probabilities(P, Q, ctx, k, rule)"),
                ("J[out[0], out[1]] += w * M1[out[1]]", "J[out[0], out[1]] += w * M1[ctx]"),
                ("J[out[0]] += w * J2[out[0]]", "J[out[0]] += w * J2"), base=_LOOP3),
            "rounds that emit fewer than three tokens are dropped": edit(
                '''
elif len(out) == 2:
    J[out[0], out[1]] += w * M1[out[1]]
else:
    J[out[0]] += w * J2[out[0]]
''',
                "", base=_LOOP3),
            "the two-token window measured instead": """
def three_token_tv(P, Q, ctx, k, rule="correct"):
    return tv_distance(first_two_probabilities(P, Q, ctx, k, rule), target_joint(P, ctx))
""",
        },
        "right": {
            "a loop over the outcomes": edit(
                ("T = P[ctx][:, None, None] * P[:, :, None] * P[None, :, :]", ""),
                ("return 0.5 * float(np.abs(J - T).sum())", "return tv_distance(J, target_joint(P, ctx)[:, :, None] * P[None, :, :])"), base=_LOOP3),
            "outcomes grouped by length with dictionaries, plain Python TV": """
def three_token_tv(P, Q, ctx, k, rule="correct"):
    V = len(P)
    tokens, _, prob = round_outcomes(P, Q, ctx, k, rule)
    M1 = first_token_marginal(P, Q, rule)
    J2 = {x: first_two_probabilities(P, Q, x, k, rule) for x in range(V)}
    joint = {}
    for row, w in zip(tokens.tolist(), prob.tolist()):
        out = [t for t in row if t >= 0]
        if len(out) >= 3:
            ends = {tuple(out[:3]): w}
        elif len(out) == 2:
            ends = {(out[0], out[1], z): w * M1[out[1], z] for z in range(V)}
        else:
            ends = {(out[0], y, z): w * J2[out[0]][y, z] for y in range(V) for z in range(V)}
        for key, value in ends.items():
            joint[key] = joint.get(key, 0.0) + value
    total = 0.0
    for x in range(V):
        for y in range(V):
            for z in range(V):
                total += abs(joint.get((x, y, z), 0.0) - P[ctx, x] * P[x, y] * P[y, z])
    return total / 2
""",
        },
        "delegate": {
            "speclab.rules.exact's window_tv with a window of 3": """
from speclab.rules import exact
def three_token_tv(P, Q, ctx, k, rule="correct"):
    return exact.window_tv(P, Q, ctx, k, 3, rule)
""",
            "speclab.rules.exact's first_tokens_joint and target_tokens_joint": """
from speclab.rules.exact import first_tokens_joint as fj, target_tokens_joint as tj
def three_token_tv(P, Q, ctx, k, rule="correct"):
    return 0.5 * float(np.abs(fj(P, Q, ctx, k, 3, rule) - tj(P, ctx, 3)).sum())
""",
        },
    },

    "worst_position": {
        "wrong": {
            "positions counted from 0": (edit("return int(np.argmax(gaps)) + 1", "return int(np.argmax(gaps))"),
                                         "count positions from 1"),
            "the closest position (argmin)": edit("return int(np.argmax(gaps)) + 1", "return int(np.argmin(gaps)) + 1"),
            "every position against the target's FIRST token, P[ctx]": edit(
                "gaps = [tv_distance(a, b) for a, b in zip(mine, theirs)]",
                "gaps = [tv_distance(a, P[ctx]) for a in mine]"),
            "the target's n-th token taken as P[ctx] @ P^n (one step too far)": edit(
                "theirs = [np.asarray(P[ctx], dtype=float)]",
                "theirs = [np.asarray(P[ctx], dtype=float) @ P]"),
            "each round's tokens only, rounds after the first ignored (starts never pushed forward)": edit(
                "starts[m + length] += starts[m, c] * end[length]", "pass"),
            "the window's TV (the first n tokens jointly), which only grows with n": ("""
from speclab.rules.exact import first_tokens_joint, target_tokens_joint
def worst_position(P, Q, ctx, k, rule, n_max):
    gaps = [tv_distance(first_tokens_joint(P, Q, ctx, k, n, rule), target_tokens_joint(P, ctx, n))
            for n in range(1, n_max + 1)]
    return int(np.argmax(gaps)) + 1
""", "that is the window's TV, not the answer"),
            "what each new position adds to the window's TV": ("""
from speclab.rules.exact import first_tokens_joint, target_tokens_joint
def worst_position(P, Q, ctx, k, rule, n_max):
    windows = [tv_distance(first_tokens_joint(P, Q, ctx, k, n, rule), target_tokens_joint(P, ctx, n))
               for n in range(1, n_max + 1)]
    return int(np.argmax(np.diff([0.0] + windows))) + 1
""", "grows most from one window to the next"),
            "first_token_marginal chained once per position (every round taken to emit one token)": """
# Helpers you may call: round_outcomes, first_token_marginal, first_two_probabilities
def worst_position(P, Q, ctx, k, rule, n_max):
    M = first_token_marginal(P, Q, rule)
    mine, theirs = np.eye(len(P))[ctx], np.eye(len(P))[ctx]
    gaps = []
    for n in range(n_max):
        mine, theirs = mine @ M, theirs @ P
        gaps.append(tv_distance(mine, theirs))
    return int(np.argmax(gaps)) + 1
""",
            "the notebook's own pair's answers, written down": """
def worst_position(P, Q, ctx, k, rule, n_max):
    return {"greedy": 2, "no_resample": 1, "continue": 4}[rule]
""",
            "the position of the largest single-token gap, max |a - b| (not TV)": edit(
                "gaps = [tv_distance(a, b) for a, b in zip(mine, theirs)]",
                "gaps = [float(np.abs(a - b).max()) for a, b in zip(mine, theirs)]"),
        },
        "right": {
            "the next n tokens' marginals from each start token, recursively, with a cache": """
from functools import lru_cache
def worst_position(P, Q, ctx, k, rule, n_max):
    V = len(P)
    rounds = {c: round_outcomes(P, Q, c, k, rule) for c in range(V)}

    @lru_cache(maxsize=None)
    def ahead(c, n):
        # row j: the distribution of the (j+1)-th token emitted from c
        out = np.zeros((n, V))
        tokens, _, prob = rounds[c]
        for row, w in zip(tokens.tolist(), prob.tolist()):
            said = [t for t in row if t >= 0][:n]
            for j, x in enumerate(said):
                out[j, x] += w
            if len(said) < n:
                out[len(said):] += w * ahead(said[-1], n - len(said))
        return out

    mine = ahead(ctx, n_max)
    best, where = -1.0, 0
    for n in range(n_max):
        d = 0.5 * float(np.abs(mine[n] - np.linalg.matrix_power(P, n + 1)[ctx]).sum())
        if d > best:
            best, where = d, n + 1
    return where
""",
            "the target's tokens from matrix powers": edit(
                ("theirs = [np.asarray(P[ctx], dtype=float)]", "theirs = [np.linalg.matrix_power(P, n + 1)[ctx] for n in range(n_max)]"),
                ("for _ in range(n_max - 1):", ""),
                ("theirs.append(theirs[-1] @ P)", "")),
        },
        "delegate": {
            "speclab.rules.exact's first_tokens_joint, summed over the other positions": """
from speclab.rules.exact import first_tokens_joint, target_tokens_joint
def worst_position(P, Q, ctx, k, rule, n_max):
    joint = first_tokens_joint(P, Q, ctx, k, n_max, rule)
    target = target_tokens_joint(P, ctx, n_max)
    gaps = [tv_distance(joint.sum(axis=tuple(a for a in range(n_max) if a != n)),
                        target.sum(axis=tuple(a for a in range(n_max) if a != n))) for n in range(n_max)]
    return int(np.argmax(gaps)) + 1
""",
            "the exact module's joints, reached as module attributes": """
from speclab.rules import exact
def worst_position(P, Q, ctx, k, rule, n_max):
    J, T = exact.first_tokens_joint(P, Q, ctx, k, n_max, rule), exact.target_tokens_joint(P, ctx, n_max)
    alone = [(np.moveaxis(J, n, 0).reshape(len(P), -1).sum(axis=1), np.moveaxis(T, n, 0).reshape(len(P), -1).sum(axis=1))
             for n in range(n_max)]
    return int(np.argmax([0.5 * float(np.abs(a - b).sum()) for a, b in alone])) + 1
""",
        },
    },
}

# Break-it: each broken rule must break exactly as specified. These are wrong answers for the
# break-it tests (they name verify_round too, so they sit under the same function).
_BREAKIT = {
    "break-it: greedy implemented as the correct rule (does not break)": _edit(
        ("        if rule == \"greedy\":\n", "        if False:\n")),
    "break-it: greedy that draws a uniform for its test": _edit(
        ("            kept = x == int(np.argmax(p))\n",
         "            rng.random()\n            kept = x == int(np.argmax(p))\n")),
    "break-it: greedy keeps the last maximum on a tie": (_edit(
        ("kept = x == int(np.argmax(p))", "kept = x == len(p) - 1 - int(np.argmax(p[::-1]))")), "FIRST maximum"),
    "break-it: greedy against the draft's argmax": _edit(
        ("kept = x == int(np.argmax(p))", "kept = x == int(np.argmax(q))")),
    "break-it: greedy that samples p on rejection": _edit(
        (_FIX, "        out.append(sample_from(p if rule in (\"no_resample\", \"greedy\") else residual(p, q), "
               "rng.random()))\n")),
    "break-it: no_resample implemented as the correct rule (does not break)": _edit(
        (_FIX, "        out.append(sample_from(residual(p, q), rng.random()))\n")),
    "break-it: no_resample samples q": _edit(
        (_FIX, "        out.append(sample_from(q if rule == \"no_resample\" else residual(p, q), rng.random()))\n")),
    "break-it: no_resample samples the context's row": _edit(
        (_FIX, "        out.append(sample_from(P[ctx] if rule == \"no_resample\" else residual(p, q), "
               "rng.random()))\n")),
    "break-it: continue implemented as the correct rule (does not break)": _edit(
        ("        if rule == \"continue\":\n            out.extend(int(d) for d in drafted[i + 1:])\n", "")),
    "break-it: continue keeps the rejected draft too": _edit(
        ("out.extend(int(d) for d in drafted[i + 1:])", "out.extend(int(d) for d in drafted[i:])")),
    "break-it: continue drops the residual token": _edit(
        (_FIX, "        if rule != \"continue\":\n    " + _FIX)),
    "break-it: continue adds a bonus token": _edit(
        ("            out.extend(int(d) for d in drafted[i + 1:])\n",
         "            out.extend(int(d) for d in drafted[i + 1:])\n"
         "            out.append(sample_from(P[out[-1]], rng.random()))\n")),
    "break-it: continue tests the remaining drafts instead of emitting them": _edit(
        ("            out.extend(int(d) for d in drafted[i + 1:])\n        return out\n",
         "            continue\n        return out\n")),
}
CATALOG["verify_round"]["wrong"].update(_BREAKIT)


# The message a student with each of these mistakes must read (a fragment of it).
MESSAGES = {
    ("tv_distance", "without the 0.5"): "remember the 0.5",
    ("tv_distance", "row by row on a 2-D array (returns an array)"): "sums over every entry",
    ("verify_round", "off-by-one prefix: verifies drafted[i] against P[drafted[i]]"): "the token before it",
    ("verify_round", "bonus token missing"): "bonus",
    ("verify_round", "drafts kept after a rejection"): "and stops",
    ("verify_round", "resamples from p instead of the residual"): "residual of row",
    ("verify_round", "break-it: greedy implemented as the correct rule (does not break)"): "draws no uniform",
    ("verify_round", "break-it: no_resample implemented as the correct rule (does not break)"): "not the residual",
    ("verify_round", "break-it: continue implemented as the correct rule (does not break)"): "drafted[i+1:]",
    ("speculative_joint", "counts, not frequencies"): "1/trials",
    ("speculative_joint", "the next round restarts from ctx"): "from THAT token",
}
for (_func, _desc), _fragment in MESSAGES.items():
    CATALOG[_func]["wrong"][_desc] = (CATALOG[_func]["wrong"][_desc], _fragment)
