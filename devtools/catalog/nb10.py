"""Answers the 10_real_transformer grader must judge: plausible mistakes, correct variants, delegations."""
from devtools.catalog import edit

AID = "10_real_transformer"

CATALOG = {
    "verify_block": {
        "wrong": {
            "returns logits (target.forward), not distributions": ("""
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    rows = target.forward(list(fresh) + list(drafted), cache)
    return rows[len(fresh) - 1:]
""", "each row is a probability distribution"),
            "returns every row of the forward, the fresh tokens' too": ("""
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    return target.probs(list(fresh) + list(drafted), cache)
""", "return k + 1 rows"),
            "returns the drafts' k rows, missing the one after the text": ("""
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    rows = target.probs(list(fresh) + list(drafted), cache)
    return rows[len(fresh):]
""", "return k + 1 rows"),
            "k + 1 separate forwards (right numbers, not one pass)": ("""
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    rows = [target.probs(list(fresh), cache)[-1]]
    for x in drafted:
        rows.append(target.probs([x], cache)[0])
    return np.array(rows)
""", "ONE call"),
            "feeds only the drafts (the fresh tokens never reach the cache)": """
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    return target.probs(list(drafted), cache)
""",
            "feeds only the last fresh token (a prefill of several is lost)": ("""
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    return target.probs([fresh[-1]] + list(drafted), cache)
""", "the cache ends holding the text and the drafts"),
            "the rows shifted by one (after each draft, and one beyond)": """
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    rows = target.probs(list(fresh) + list(drafted), cache)
    return np.vstack([rows[len(fresh):], rows[-1:]])
""",
        },
        "right": {
            "forward plus a softmax of its own, counted from the end": """
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    logits = target.forward(list(fresh) + list(drafted), cache).astype(float)
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = z / z.sum(axis=1, keepdims=True)
    return probs[-(len(drafted) + 1):]
""",
            "a concatenated array and an explicit index list": """
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    tokens = np.concatenate([np.asarray(fresh, dtype=int), np.asarray(drafted, dtype=int)])
    rows = target.probs(tokens, cache)
    return rows[[len(fresh) - 1 + i for i in range(len(drafted) + 1)]]
""",
        },
        "delegate": {
            "the course's verify_block, imported under another name": """
# Helpers you may call: none
from speclab.realspec import verify_block as one_pass
def verify_block(target, cache, fresh, drafted):
    return one_pass(target, cache, fresh, drafted)
""",
            "through the module attribute": """
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    return realspec.verify_block(target, cache, fresh, drafted)
""",
        },
    },
    "speculative_generate": {
        "wrong": {
            "forgets the target's rollback": edit("target_cache.truncate(target_cache.length - len(drafted) + kept)", ""),
            "forgets the draft's rollback": edit("draft_cache.truncate(min(draft_cache.length, len(context) + kept))", ""),
            "keeps the rejected draft in the target's cache (off by one)": edit("target_cache.truncate(target_cache.length - len(drafted) + kept)", "target_cache.truncate(min(target_cache.length, target_cache.length - len(drafted) + kept + 1))"),
            "cuts the target's cache one token too far": edit("target_cache.truncate(target_cache.length - len(drafted) + kept)", "target_cache.truncate(target_cache.length - len(drafted) + kept - 1)"),
            "greedy acceptance: keep x iff it is the target's argmax": edit("if rng.random() < p[i][x] / q[i][x]:", "if x == int(np.argmax(p[i])):"),
            "p/q inverted": edit("if rng.random() < p[i][x] / q[i][x]:", "if rng.random() < q[i][x] / p[i][x]:"),
            "resamples from p on rejection, not the residual": edit("emitted.append(int(sample_from(residual(p[i], q[i]), rng.random())))", "emitted.append(int(sample_from(p[i], rng.random())))"),
            "resamples from q on rejection": edit("emitted.append(int(sample_from(residual(p[i], q[i]), rng.random())))", "emitted.append(int(sample_from(q[i], rng.random())))"),
            "bonus token missing": edit("emitted.append(int(sample_from(p[k], rng.random())))", "pass"),
            "bonus token drawn from the draft": edit("emitted.append(int(sample_from(p[k], rng.random())))", "emitted.append(int(sample_from(q[k - 1], rng.random())))"),
            "bonus from the distribution before the last draft": edit("emitted.append(int(sample_from(p[k], rng.random())))", "emitted.append(int(sample_from(p[k - 1], rng.random())))"),
            "feeds every emitted token again (the kept drafts twice)": edit("fresh = emitted[-1:]", "fresh = list(emitted)"),
            "returns every token of the last round, not the first n": (edit("return context[len(prompt):len(prompt) + n]", "return context[len(prompt):]"),
                                                                       "return exactly n tokens"),
            "rebuilds both caches from scratch every round (right tokens, no cache reused)": (edit(
                ("drafted, q = draft_block(draft, draft_cache, context, k, rng)",
                 "target_cache, draft_cache = target.new_cache(), draft.new_cache()\n"
                 "drafted, q = draft_block(draft, draft_cache, context, k, rng)"),
                ("p = verify_block(target, target_cache, fresh, drafted)", "p = verify_block(target, target_cache, context, drafted)")),
                "recomputed"),
        },
        "right": {
            "u * q < p, and the rollback as an absolute length": edit(
                ("if rng.random() < p[i][x] / q[i][x]:", "if rng.random() * q[i][x] < p[i][x]:"),
                ("target_cache.truncate(target_cache.length - len(drafted) + kept)", "target_cache.truncate(len(context) + kept)")),
            "accept with min(1, p/q) and u <= it": edit("if rng.random() < p[i][x] / q[i][x]:", "if rng.random() <= min(1.0, p[i][x] / q[i][x]):"),
        },
        "delegate": {
            "the course's loop under another name": """
# Helpers you may call: draft_block, verify_block, sample_from, residual
from speclab.realspec import speculative_generate as loop
def speculative_generate(target, draft, prompt, n, k, rng):
    return loop(target, draft, prompt, n, k, rng)
""",
            "through the module attribute": """
# Helpers you may call: draft_block, verify_block, sample_from, residual
def speculative_generate(target, draft, prompt, n, k, rng):
    return realspec.speculative_generate(target, draft, prompt, n, k, rng)
""",
        },
    },
    "confident_draft": {
        "wrong": {
            "decides on the largest probability of q, not on the token drafted": (edit(
                "if len(drafted) == k_max or q[x] < threshold:",
                "if len(drafted) == k_max or q.max() < threshold:"), "the drafted token's own probability"),
            "stops when q[x] equals the threshold too (<= instead of <)": (edit(
                "if len(drafted) == k_max or q[x] < threshold:",
                "if len(drafted) == k_max or q[x] <= threshold:"), "does not stop"),
            "drops the unsure token instead of drafting it (and may draft nothing)": ("""
# Helpers you may call: sample_from
def confident_draft(draft, cache, context, k_max, threshold, rng):
    q = draft.probs(context[cache.length:], cache)[-1]
    drafted, rows = [], []
    while len(drafted) < k_max:
        x = int(sample_from(q, rng.random()))
        if q[x] < threshold:
            break
        drafted.append(x)
        rows.append(q)
        q = draft.probs([x], cache)[0]
    return drafted, np.array(rows)
""", "it is drafted, and then drafting stops"),
            "ignores the threshold: always k_max tokens": edit("if len(drafted) == k_max or q[x] < threshold:", "if len(drafted) == k_max:"),
            "feeds the draft the whole context, whatever its cache holds": (edit(
                "q = draft.probs(context[cache.length:], cache)[-1]",
                "q = draft.probs(list(context), cache)[-1]"), "context[cache.length:]"),
            "feeds the last drafted token to the draft too": (edit(
                ("rows.append(q)", "rows.append(q)\nnxt = draft.probs([x], cache)[0]"),
                ("q = draft.probs([x], cache)[0]", "q = nxt")), "drafted[:-1]"),
            "returns the distribution after each drafted token, not the one it was drawn from": (edit(
                ("rows.append(q)", ""),
                ("return drafted, np.array(rows)", "rows.append(q)\nreturn drafted, np.array(rows)"),
                ("q = draft.probs([x], cache)[0]", "q = draft.probs([x], cache)[0]\nrows.append(q)")), "row by row"),
        },
        "right": {
            "a for loop over k_max, stopping test written as not >=": """
# Helpers you may call: sample_from
def confident_draft(draft, cache, context, k_max, threshold, rng):
    drafted, q = [], []
    dist = draft.probs(context[cache.length:], cache)[-1]
    for j in range(k_max):
        x = sample_from(dist, rng.random())
        drafted.append(int(x))
        q.append(dist)
        if not dist[x] >= threshold or j == k_max - 1:
            break
        dist = draft.probs([int(x)], cache)[0]
    return drafted, np.stack(q)
""",
        },
        "delegate": {
            "the course's drafter": """
# Helpers you may call: sample_from
def confident_draft(draft, cache, context, k_max, threshold, rng):
    return realspec.confident_draft(draft, cache, context, k_max, threshold, rng)
""",
            "the course's block factory": """
# Helpers you may call: sample_from
from speclab.realspec import confident_block as _block
def confident_draft(draft, cache, context, k_max, threshold, rng):
    return _block(k_max, threshold)(draft, cache, context, rng)
""",
        },
    },
    "generate_stale": {
        "wrong": {
            "rolls the target's cache back after all (the correct loop)": (edit("draft_cache.truncate(min(draft_cache.length, len(context) + kept))", "target_cache.truncate(target_cache.length - len(drafted) + kept)\ndraft_cache.truncate(min(draft_cache.length, len(context) + kept))"),
                                                                           "must differ from the correct one"),
            "rolls back neither cache": edit("draft_cache.truncate(min(draft_cache.length, len(context) + kept))", "pass"),
            "feeds the target every token it has not seen, by the cache's length": edit("fresh = emitted[-1:]", "fresh = context[target_cache.length:]"),
            "the stale loop without the bonus token": edit("emitted.append(int(sample_from(p[k], rng.random())))", "pass"),
        },
        "right": {
            "the draft's rollback written as an absolute length": edit(
                ("if rng.random() < p[i][x] / q[i][x]:", "if rng.random() * q[i][x] < p[i][x]:"),
                ("draft_cache.truncate(min(draft_cache.length, len(context) + kept))", "draft_cache.truncate(min(len(context) + k - 1, len(context) + kept))")),
        },
        "delegate": {
            "the course's loop with stale=True": """
# Helpers you may call: draft_block, verify_block, sample_from, residual
from speclab.realspec import speculative_generate as loop
def generate_stale(target, draft, prompt, n, k, rng):
    return loop(target, draft, prompt, n, k, rng, stale=True)
""",
        },
    },
    "stale_cache_tv": {
        "wrong": {
            "TV without the 0.5": edit("return float(tv_distance(p, p_stale))", "return float(np.abs(p - p_stale).sum())"),
            "the rejected tokens after the whole context (compared at the wrong place)": """
# Helpers you may call: tv_distance
def stale_cache_tv(target, context, rejected):
    clean = target.new_cache()
    p = target.probs(list(context), clean)[-1]
    stale = target.new_cache()
    r = target.probs(list(context) + list(rejected), stale)[-1]
    return float(tv_distance(p, r))
""",
            "one cache for both (the clean one is polluted too)": """
# Helpers you may call: tv_distance
def stale_cache_tv(target, context, rejected):
    cache = target.new_cache()
    target.forward(list(context[:-1]), cache)
    stale = cache
    if len(rejected):
        target.forward(list(rejected), stale)
    p = target.probs(list(context[-1:]), cache.copy())[0]
    r = target.probs(list(context[-1:]), stale)[0]
    return float(tv_distance(p, r))
""",
            "forgets to feed context[-1]: compares the distributions after context[:-1] and after the junk": """
# Helpers you may call: tv_distance
def stale_cache_tv(target, context, rejected):
    clean = target.new_cache()
    p = target.probs(list(context[:-1]), clean)[-1]
    stale = clean.copy()
    r = target.probs(list(rejected), stale)[-1] if len(rejected) else p
    return float(tv_distance(p, r))
""",
        },
        "right": {
            "two caches built from scratch, and a TV of its own": """
# Helpers you may call: tv_distance
def stale_cache_tv(target, context, rejected):
    context, rejected = [int(t) for t in context], [int(t) for t in rejected]
    p = target.probs(context, target.new_cache())[-1]
    r = target.probs(context[:-1] + rejected + context[-1:], target.new_cache())[-1]
    return 0.5 * float(np.abs(p - r).sum())
""",
        },
        "delegate": {
            "the course's measurement": """
# Helpers you may call: tv_distance
from speclab import realspec as rs
def stale_cache_tv(target, context, rejected):
    return rs.stale_cache_tv(target, context, rejected)
""",
        },
    },
    "junk_in_cache": {
        "wrong": {
            "counts a round's own rejected drafts against its own tokens": (edit(
                "out += [junk] * (a + 1)\njunk += k - a", "junk += k - a\nout += [junk] * (a + 1)"), "computed before any of its drafts are rejected"),
            "counts the bonus slot too (k + 1 - kept per round)": edit("junk += k - a", "junk += k + 1 - a"),
            "one entry per round, not per token": (edit("out += [junk] * (a + 1)", "out.append(junk)"),
                                                    "one entry per emitted token"),
            "counts the kept drafts as the junk": edit("junk += k - a", "junk += a"),
            "one entry per drafted token (k per round)": edit("out += [junk] * (a + 1)", "out += [junk] * k"),
        },
        "right": {
            "cumulative sums with NumPy": """
# Helpers you may call: none
def junk_in_cache(kept, k):
    kept = np.asarray(kept, dtype=int)
    before = np.concatenate([[0], np.cumsum(k - kept)[:-1]])
    return np.repeat(before, kept + 1).tolist()
""",
        },
        "delegate": {
            "the course's count": """
# Helpers you may call: none
from speclab.realspec import junk_in_cache as _count
def junk_in_cache(kept, k):
    return _count(kept, k)
""",
        },
    },
}
