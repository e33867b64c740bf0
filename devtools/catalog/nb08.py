"""Answers the 08_real_text grader must judge: plausible mistakes, and correct variants.
Long because it is a table: one entry per mistake the grader is held to."""
from devtools.catalog import edit


AID = "08_real_text"

CATALOG = {
    "next_counts": {
        "wrong": {
            "vectors sized by the text's own alphabet (max id + 1), not the shared V": (edit(
                "ids = [int(t) for t in ids]",
                '''
ids = [int(t) for t in ids]
V = max(ids) + 1
'''), 'the vector has length V'),
            "the context includes the token it should predict": edit("context = tuple(ids[i - m:i])", "context = tuple(ids[i - m + 1:i + 1])"),
            "skips the last position": edit("for i in range(m, len(ids)):", "for i in range(m, len(ids) - 1):"),
            "starts at position 0 with shortened contexts": edit(
                '''
for i in range(m, len(ids)):
    context = tuple(ids[i - m:i])
''',
                '''
for i in range(len(ids)):
    context = tuple(ids[max(0, i - m):i])
'''),
            "the context is shifted one token back": edit(
                '''
for i in range(m, len(ids)):
    context = tuple(ids[i - m:i])
''',
                '''
for i in range(m + 1, len(ids)):
    context = tuple(ids[i - m - 1:i - 1])
'''),
            "normalised to probabilities instead of counts": edit("return table", "return {key: vec / vec.sum() for key, vec in table.items()}"),
            "string keys instead of tuples": edit("context = tuple(ids[i - m:i])", "context = str(ids[i - m:i])"),
            "count vectors as Python lists, not NumPy arrays": (edit("table[context] = np.zeros(V)", "table[context] = [0] * V"), "each value must be a NumPy array"),
            "returns a list of (context, counts) pairs instead of a dict": (edit("return table", "return list(table.items())"), "must return a dict"),
        },
        "right": {
            "a plain loop with setdefault": """
def next_counts(ids, m, V):
    table = {}
    for i in range(m, len(ids)):
        table.setdefault(tuple(int(t) for t in ids[i - m:i]), np.zeros(V))[int(ids[i])] += 1
    return table
""",
            "defaultdict with integer counts": """
from collections import defaultdict
def next_counts(ids, m, V):
    ids = list(ids)
    table = defaultdict(lambda: np.zeros(V, dtype=int))
    for i in range(m, len(ids)):
        table[tuple(ids[i - m:i])][ids[i]] += 1
    return dict(table)
""",
            "Counter of (context, next) pairs, then vectors": """
from collections import Counter
def next_counts(ids, m, V):
    ids = [int(t) for t in ids]
    pairs = Counter((tuple(ids[i - m:i]), ids[i]) for i in range(m, len(ids)))
    table = {}
    for (ctx, x), n in pairs.items():
        table.setdefault(ctx, np.zeros(V))[x] = n
    return table
""",
        },
        "delegate": {
            "the course's NumPy count, imported under another name": """
from speclab.models.ngram import next_counts as count_them
def next_counts(ids, m, V):
    return count_them(ids, m, V)
""",
            "the tables of a model built on the fly (a class)": """
from speclab.models import ngram as lm
def next_counts(ids, m, V):
    return lm.NGram(ids=list(ids), order=m + 1, V=V).tables[m]
""",
            "build_tables through the module attribute": """
import speclab.models.ngram
def next_counts(ids, m, V):
    return speclab.models.ngram.build_tables(ids, m + 1, V)[m]
""",
        },
    },
    "ngram_dist": {
        "wrong": {
            "no smoothing: the longest seen context's counts, normalised (zeros)": ("""
def ngram_dist(tables, context, V):
    p = np.full(V, 1.0 / V)
    n = len(context)
    for m, table in enumerate(tables):
        key = tuple(int(t) for t in context[n - m:]) if m else ()
        if m <= n and key in table:
            p = table[key] / table[key].sum()
    return p
""", 'smoothing must leave no probability at zero'),
            "context[-m:] for every m (m = 0 takes the whole context)": """
def ngram_dist(tables, context, V):
    p = np.full(V, 1.0 / V)
    for m, table in enumerate(tables):
        c = table.get(tuple(int(t) for t in context[-m:]))
        if c is None or m > len(context):
            continue
        N, T = c.sum(), np.count_nonzero(c)
        p = (c + T * p) / (N + T)
    return p
""",
            "the first m tokens of the context instead of the last m": edit(
                "key = tuple(int(t) for t in context[n - m:]) if m > 0 else ()",
                "key = tuple(int(t) for t in context[:m])"),
            "an unseen context resets to uniform": edit(
                "continue",
                '''
p = np.full(V, 1.0 / V)
continue
'''),
            "a fixed weight of 1 instead of T": edit(
                '''
N, T = c.sum(), np.count_nonzero(c)
p = (c + T * p) / (N + T)
''',
                "p = (c + p) / (c.sum() + 1)"),
            "T is the total count N": edit(
                '''
N, T = c.sum(), np.count_nonzero(c)
p = (c + T * p) / (N + T)
''',
                '''
N = c.sum()
p = (c + N * p) / (2 * N)
'''),
            "add-one on the longest seen context only": """
def ngram_dist(tables, context, V):
    n = len(context)
    for m in range(len(tables) - 1, -1, -1):
        c = tables[m].get(tuple(int(t) for t in context[n - m:]) if m else ()) if m <= n else None
        if c is not None:
            return (c + 1) / (c.sum() + V)
    return np.full(V, 1.0 / V)
""",
            "not normalised: T * p added without dividing by N + T": edit(
                '''
N, T = c.sum(), np.count_nonzero(c)
p = (c + T * p) / (N + T)
''',
                "p = c / c.sum() + np.count_nonzero(c) * p / c.sum()"),
            "returns a list instead of a NumPy array": ("""
def ngram_dist(tables, context, V):
    p = [1.0 / V] * V
    n = len(context)
    for m, table in enumerate(tables):
        c = table.get(tuple(context[n - m:]) if m else ()) if m <= n else None
        if c is None:
            continue
        N, T = float(sum(c)), sum(1 for v in c if v > 0)
        p = [(float(cx) + T * px) / (N + T) for cx, px in zip(c, p)]
    return p
""", "must return a NumPy array"),
        },
        "right": {
            "stop at the first unseen context (a longer one cannot have been seen)": """
def ngram_dist(tables, context, V):
    p = np.full(V, 1.0 / V)
    n = len(context)
    for m, table in enumerate(tables):
        key = tuple(context[n - m:]) if m else ()
        if m > n or key not in table:
            break
        c = table[key]
        T = (c > 0).sum()
        p = (c + T * p) / (c.sum() + T)
    return p
""",
            "recursion from the top order down": """
def ngram_dist(tables, context, V):
    def rec(m):
        if m < 0:
            return np.ones(V) / V
        lower = rec(m - 1)
        if m > len(context):
            return lower
        c = tables[m].get(tuple(list(context)[len(context) - m:]))
        if c is None:
            return lower
        T = np.count_nonzero(c)
        return (c + T * lower) / (c.sum() + T)
    return rec(len(tables) - 1)
""",
        },
        "delegate": {
            "the loophole of issue 15: a model object from speclab.models.ngram": """
from speclab.models import ngram
def ngram_dist(tables, context, V):
    return ngram.NGram(tables=tables, order=len(tables), V=V)(list(context))
""",
            "the course's function under another name": """
from speclab.models.ngram import ngram_dist as witten_bell
def ngram_dist(tables, context, V):
    return witten_bell(tables, list(context), V)
""",
            "a method of the model class, reached through the package": """
import speclab.models.ngram
def ngram_dist(tables, context, V):
    model = speclab.models.ngram.NGram(tables=list(tables), order=len(tables), V=V)
    return model.uncached(list(context))
""",
        },
    },
    "verify_context_round": {
        "wrong": {
            "greedy: accept iff x is the target's argmax": edit("if rng.random() < p[x] / q[x]:", "if x == int(np.argmax(p)):"),
            "p/q inverted": edit("if rng.random() < p[x] / q[x]:", "if rng.random() < q[x] / p[x]:"),
            "resamples from p instead of the residual": edit(
                "out.append(int(sample_from(residual(p, q), rng.random())))",
                "out.append(sample_from(p, rng.random()))"),
            "keeps the remaining drafts after a rejection": """
def verify_context_round(target, draft, context, drafted, rng):
    prefix, out = list(context), []
    for i, x in enumerate(drafted):
        p, q = target(prefix), draft(prefix)
        if rng.random() < p[x] / q[x]:
            out.append(int(x)); prefix.append(int(x)); continue
        out.append(sample_from(residual(p, q), rng.random()))
        return out + [int(d) for d in drafted[i + 1:]]
    out.append(sample_from(target(prefix), rng.random()))
    return out
""",
            "no bonus token": edit("out.append(int(sample_from(target(prefix), rng.random())))", ""),
            "bonus token drawn from the draft": edit(
                "out.append(int(sample_from(target(prefix), rng.random())))",
                "out.append(sample_from(draft(prefix), rng.random()))"),
            "bonus token from target(context), before the drafts": edit(
                "out.append(int(sample_from(target(prefix), rng.random())))",
                "out.append(sample_from(target(list(context)), rng.random()))"),
            "every draft judged on the original context (the prefix never grows)": """
def verify_context_round(target, draft, context, drafted, rng):
    out = []
    p, q = target(list(context)), draft(list(context))
    for x in drafted:
        if rng.random() < p[x] / q[x]:
            out.append(int(x)); continue
        out.append(sample_from(residual(p, q), rng.random()))
        return out
    out.append(sample_from(target(list(context) + list(drafted)), rng.random()))
    return out
""",
            "draft i judged on the prefix that already includes it": edit("p, q = target(prefix), draft(prefix)", "p, q = target(prefix + [x]), draft(prefix + [x])"),
            "residual not renormalised": edit(
                "out.append(int(sample_from(residual(p, q), rng.random())))",
                "out.append(sample_from(np.maximum(p - q, 0), rng.random()))"),
            "residual not clipped: (p - q) / sum(p - q)": edit("out.append(int(sample_from(residual(p, q), rng.random())))", '''
d = p - q
out.append(sample_from(d / np.abs(d).sum(), rng.random()))
'''),
            "bonus token emitted twice": edit('''
out.append(int(sample_from(target(prefix), rng.random())))
return out
''', '''
b = sample_from(target(prefix), rng.random())
return out + [b, b]
'''),
            "a bonus token after a rejection too": edit('''
    out.append(int(sample_from(residual(p, q), rng.random())))
    return out
out.append(int(sample_from(target(prefix), rng.random())))
''', '''
    out.append(sample_from(residual(p, q), rng.random()))
    prefix.append(out[-1])
    break
out.append(sample_from(target(prefix), rng.random()))
'''),
            "the accept test's uniform reused for the residual sample": edit(("if rng.random() < p[x] / q[x]:", '''
u = rng.random()
if u < p[x] / q[x]:
'''), ("out.append(int(sample_from(residual(p, q), rng.random())))", "out.append(sample_from(residual(p, q), u))")),
            "returns a NumPy array of the tokens": ("""
def verify_context_round(target, draft, context, drafted, rng):
    prefix, out = list(context), []
    for x in drafted:
        p, q = target(prefix), draft(prefix)
        if rng.random() < p[x] / q[x]:
            out.append(x); prefix.append(x); continue
        out.append(sample_from(residual(p, q), rng.random()))
        return np.array(out)
    out.append(sample_from(target(prefix), rng.random()))
    return np.array(out)
""", "plain Python ints"),
        },
        "right": {
            "u <= p/q": edit("if rng.random() < p[x] / q[x]:", "if rng.random() <= p[x] / q[x]:"),
            "u * q[x] < p[x], prefixes built by slicing": """
def verify_context_round(target, draft, context, drafted, rng):
    out = []
    for i, x in enumerate(drafted):
        prefix = list(context) + list(drafted[:i])
        p, q = target(prefix), draft(prefix)
        if rng.random() * q[x] < p[x]:
            out.append(x)
        else:
            out.append(sample_from(residual(p, q), rng.random()))
            return out
    out.append(sample_from(target(list(context) + list(drafted)), rng.random()))
    return out
""",
            "u < min(1, p/q), residual written out": """
def verify_context_round(target, draft, context, drafted, rng):
    prefix, out = list(context), []
    for x in drafted:
        p, q = np.asarray(target(prefix)), np.asarray(draft(prefix))
        if rng.random() < min(1.0, p[x] / q[x]):
            out.append(int(x)); prefix = prefix + [int(x)]; continue
        r = np.clip(p - q, 0, None)
        out.append(sample_from(r / r.sum() if r.sum() > 0 else p, rng.random()))
        return out
    out.append(sample_from(target(prefix), rng.random()))
    return out
""",
        },
        "delegate": {
            "the loophole of issue 15: the course's round": """
from speclab.decoding import textspec
def verify_context_round(target, draft, context, drafted, rng):
    return textspec.verify_round(target, draft, context, drafted, rng)
""",
            "the course's play_round under another name": """
from speclab.decoding.textspec import play_round as one_round
def verify_context_round(target, draft, context, drafted, rng):
    emitted, _ = one_round(target, draft, list(context), list(drafted), rng)
    return [int(t) for t in emitted]
""",
        },
    },
    "lookup_marginal": {
        "wrong": {
            "resample_p gives back p (the shortcut looks harmless)": """
def lookup_marginal(p, x, rule="correct"):
    return np.array(p, dtype=float)
""",
            "resample_p forgets the accepted copies": """
def lookup_marginal(p, x, rule="correct"):
    p = np.asarray(p, dtype=float)
    if rule == "correct":
        return p.copy()
    return (1 - p[x]) * p
""",
            "resample_p adds p(x)(1 - p(x)) to x but takes nothing from the others": """
def lookup_marginal(p, x, rule="correct"):
    p = np.asarray(p, dtype=float)
    if rule == "correct":
        return p.copy()
    out = p.copy()
    out[x] += p[x] * (1 - p[x])
    return out
""",
            "rejection weighted by p(x) instead of 1 - p(x)": """
def lookup_marginal(p, x, rule="correct"):
    p = np.asarray(p, dtype=float)
    kept = np.zeros_like(p)
    kept[x] = p[x]
    fix = onehot_residual(p, x) if rule == "correct" else p
    return kept + p[x] * fix
""",
            "correct rule without the accepted mass": """
def lookup_marginal(p, x, rule="correct"):
    p = np.asarray(p, dtype=float)
    if rule == "correct":
        return (1 - p[x]) * onehot_residual(p, x)
    kept = np.zeros_like(p)
    kept[x] = p[x]
    return kept + (1 - p[x]) * p
""",
            "the two rules swapped": """
def lookup_marginal(p, x, rule="correct"):
    p = np.asarray(p, dtype=float)
    kept = np.zeros_like(p)
    kept[x] = p[x]
    fix = p if rule == "correct" else onehot_residual(p, x)
    return kept + (1 - p[x]) * fix
""",
            "returns a Python list": ("""
def lookup_marginal(p, x, rule="correct"):
    px = float(p[x])
    fix = onehot_residual(p, x) if rule == "correct" else p
    return [(px if y == x else 0.0) + (1 - px) * float(fix[y]) for y in range(len(p))]
""", "NumPy array"),
        },
        "right": {
            "closed forms": """
def lookup_marginal(p, x, rule="correct"):
    p = np.asarray(p, dtype=float)
    if rule == "correct":
        return p.copy()
    out = (1 - p[x]) * p
    out[x] += p[x]
    return out
""",
            "a loop over tokens": """
def lookup_marginal(p, x, rule="correct"):
    px = float(p[x])
    fix = onehot_residual(p, x) if rule == "correct" else p
    return np.array([(px if y == x else 0.0) + (1 - px) * float(fix[y]) for y in range(len(p))])
""",
        },
        "delegate": {
            "notebook 02/03's one-step output distribution, with a one-hot draft": """
from speclab.views.onetoken import one_token_distribution as one_step
def lookup_marginal(p, x, rule="correct"):
    q = np.zeros(len(p))
    q[x] = 1.0
    return one_step(np.asarray(p, dtype=float), q, "no_resample" if rule == "resample_p" else "correct")
""",
        },
    },
    "shortcut_tv": {
        "wrong": {
            "measures the correct rule (always 0)": ("""
def shortcut_tv(target, contexts, proposals):
    return float(np.mean([tv_distance(lookup_marginal(target(c), x, "correct"), target(c))
                          for c, x in zip(contexts, proposals)]))
""", "the shortcut resample_p"),
            "TV without the 0.5": edit(
                'gaps.append(tv_distance(lookup_marginal(p, x, "resample_p"), p))',
                'gaps.append(np.abs(lookup_marginal(p, x, "resample_p") - p).sum())'),
            "the sum over positions, not the mean": ("""
def shortcut_tv(target, contexts, proposals):
    return float(sum(tv_distance(lookup_marginal(target(c), x, "resample_p"), target(c))
                     for c, x in zip(contexts, proposals)))
""", "not their sum or maximum"),
            "the largest damage, not the mean": """
def shortcut_tv(target, contexts, proposals):
    return float(max(tv_distance(lookup_marginal(target(c), x, "resample_p"), target(c))
                     for c, x in zip(contexts, proposals)))
""",
            "p taken after the copy: target(context + [x])": (edit("p = target(ctx)", "p = target(list(ctx) + [x])"), "p comes from target(context) itself"),
            "how often the copy comes out, not how far the output is from p": """
def shortcut_tv(target, contexts, proposals):
    return float(np.mean([lookup_marginal(target(c), x, "resample_p")[x] for c, x in zip(contexts, proposals)]))
""",
            "averages first: mean p(x) put into p(x)(1 - p(x))": """
def shortcut_tv(target, contexts, proposals):
    m = np.mean([target(c)[x] for c, x in zip(contexts, proposals)])
    return float(m * (1 - m))
""",
            "the TV of the averaged distributions, not the average TV": """
def shortcut_tv(target, contexts, proposals):
    ps = [target(c) for c in contexts]
    shortcut = [lookup_marginal(p, x, "resample_p") for p, x in zip(ps, proposals)]
    return float(tv_distance(np.mean(shortcut, axis=0), np.mean(ps, axis=0)))
""",
            "compares the shortcut with the copy, onehot(x), instead of with p": edit(
                'gaps.append(tv_distance(lookup_marginal(p, x, "resample_p"), p))',
                'gaps.append(tv_distance(lookup_marginal(p, x, "resample_p"), np.eye(len(p))[x]))'),
            "returns the per-position distances, not their mean": ("""
def shortcut_tv(target, contexts, proposals):
    return np.array([tv_distance(lookup_marginal(target(c), x, "resample_p"), target(c))
                     for c, x in zip(contexts, proposals)])
""", "return one number, a float"),
        },
        "right": {
            "a loop with tv_distance": """
def shortcut_tv(target, contexts, proposals):
    total = 0.0
    for c, x in zip(contexts, proposals):
        p = target(c)
        total += tv_distance(lookup_marginal(p, x, "resample_p"), p)
    return total / len(contexts)
""",
            "the closed form p(x)(1 - p(x)), without lookup_marginal": """
def shortcut_tv(target, contexts, proposals):
    return float(np.mean([target(c)[x] * (1 - target(c)[x]) for c, x in zip(contexts, proposals)]))
""",
            "TV written out, np.mean over a list": """
def shortcut_tv(target, contexts, proposals):
    gaps = []
    for c, x in zip(contexts, proposals):
        p = np.asarray(target(c))
        gaps.append(0.5 * np.abs(np.asarray(lookup_marginal(p, x, rule="resample_p")) - p).sum())
    return float(np.mean(gaps))
""",
        },
        "delegate": {
            "notebook 02/03's one-step output distribution in place of lookup_marginal": """
from speclab.views.onetoken import one_token_distribution
def shortcut_tv(target, contexts, proposals):
    gaps = []
    for c, x in zip(contexts, proposals):
        p = target(c)
        gaps.append(tv_distance(one_token_distribution(p, np.eye(len(p))[x], "no_resample"), p))
    return float(np.mean(gaps))
""",
        },
    },
    "damage_from_copies": {
        "wrong": {
            "the damage of the mean copy probability (the prediction's trap)": ("""
def damage_from_copies(px):
    m = float(np.mean(px))
    return m * (1 - m)
""", "ONE copy with their mean"),
            "TV without the 0.5": edit("return float(np.mean(px * (1 - px)))", "return float(np.mean(2 * px * (1 - px)))"),
            "the sum over positions, not the mean": edit("return float(np.mean(px * (1 - px)))",
                                                         "return float(np.sum(px * (1 - px)))"),
            "the rejection rate, 1 - p(x)": edit("return float(np.mean(px * (1 - px)))", "return float(np.mean(1 - px))"),
            "the acceptance rate, p(x) (a transcription: the copy is kept with p(x))": edit(
                "return float(np.mean(px * (1 - px)))", "return float(np.mean(px))"),
            "only the copy's gain counted twice over, p(x)^2 (1 - p(x))": edit(
                "return float(np.mean(px * (1 - px)))", "return float(np.mean(px ** 2 * (1 - px)))"),
            "the worst position, not the mean": edit("return float(np.mean(px * (1 - px)))",
                                                     "return float(np.max(px * (1 - px)))"),
            "a numpy array per position, not one number": edit("return float(np.mean(px * (1 - px)))",
                                                               "return px * (1 - px)"),
            "brute force through the Break and Measure's functions on two-token distributions": ("""
def damage_from_copies(px):
    gaps = []
    for a in px:
        p = np.array([float(a), 1.0 - float(a)])
        gaps.append(tv_distance(lookup_marginal(p, 0, "resample_p"), p))
    return float(np.mean(gaps))
""", "without calling lookup_marginal"),
            "brute force through shortcut_tv on a two-token target": ("""
def damage_from_copies(px):
    return float(np.mean([shortcut_tv(lambda ctx, a=a: np.array([float(a), 1.0 - float(a)]), [[0]], [0])
                          for a in px]))
""", "without calling lookup_marginal, shortcut_tv"),
        },
        "right": {
            "the shortcut's output written out on two tokens (only p(x) matters)": """
def damage_from_copies(px):
    gaps = []
    for a in px:
        p = np.array([float(a), 1.0 - float(a)])
        out = (1 - p[0]) * p
        out[0] += p[0]
        gaps.append(0.5 * np.abs(out - p).sum())
    return float(np.mean(gaps))
""",
            "plain Python": """
def damage_from_copies(px):
    values = [float(a) * (1.0 - float(a)) for a in px]
    return sum(values) / len(values)
""",
        },
        "delegate": {
            "the course's diagnosis": """
from speclab.decoding import textspec as _ts
def damage_from_copies(px):
    return _ts.damage_from_copies(px)
""",
            "imported under another name": """
from speclab.decoding.textspec import damage_from_copies as _damage
def damage_from_copies(px):
    return _damage(px)
""",
        },
    },
}
