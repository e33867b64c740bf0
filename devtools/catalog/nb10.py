"""Answers the 10_real_transformer grader must judge: plausible mistakes, correct variants, delegations."""
from devtools.catalog import edit

AID = "10_real_transformer"

_HEADER_B = "# Helpers you may call: verify_block, softmax, without, sample_from\n"

# A run's rounds from its drafts and output: a round emits its kept drafts, then one token of the target's.
_SPLIT = """
# Helpers you may call: none
def rounds_of(drafts, output):
    at, out = 0, []
    for d in drafts:
        d, kept = [int(x) for x in d], 0
        while kept < len(d) and int(output[at + kept]) == d[kept]:
            kept += 1
        out.append((d, [int(t) for t in output[at:at + kept + 1]]))
        at += kept + 1
    return out
"""

CATALOG = {
    "verify_block": {
        "wrong": {
            "returns every row of the forward, the fresh tokens' too": (
                edit("return rows[len(fresh) - 1:]", "return rows"), "return k + 1 rows"),
            "returns the drafts' k rows, missing the one after the text": (
                edit("return rows[len(fresh) - 1:]", "return rows[len(fresh):]"), "return k + 1 rows"),
            "k + 1 separate forwards (right numbers, not one pass)": (edit(
                ("rows = target.forward(list(fresh) + list(drafted), cache)", "rows = [target.forward(list(fresh), cache)[-1]]\n"
                 "for x in drafted:\n    rows.append(target.forward([x], cache)[0])"),
                ("return rows[len(fresh) - 1:]", "return np.array(rows)")), "ONE call"),
            "feeds only the drafts (the fresh tokens never reach the cache)": edit(
                ("rows = target.forward(list(fresh) + list(drafted), cache)", "rows = target.forward(list(drafted) or [0], cache)"),
                ("return rows[len(fresh) - 1:]", "return rows")),
            "feeds only the last fresh token (a prefill of several is lost)": (edit(
                ("rows = target.forward(list(fresh) + list(drafted), cache)", "rows = target.forward([fresh[-1]] + list(drafted), cache)"),
                ("return rows[len(fresh) - 1:]", "return rows")), "the cache ends holding the text and the drafts"),
            "the rows shifted by one (after each draft, and one beyond)": edit(
                "return rows[len(fresh) - 1:]", "return np.vstack([rows[len(fresh):], rows[-1:]])"),
            "probabilities instead of logits": edit(
                "return rows[len(fresh) - 1:]", "z = np.exp(rows - rows.max(axis=1, keepdims=True))\n"
                "return (z / z.sum(axis=1, keepdims=True))[len(fresh) - 1:]"),
        },
        "right": {
            "counted from the end": edit("return rows[len(fresh) - 1:]", "return rows[-(len(drafted) + 1):]"),
            "naive kernel (the same numbers up to rounding)": edit(
                "rows = target.forward(list(fresh) + list(drafted), cache)",
                "rows = target.forward(list(fresh) + list(drafted), cache, looped=False)"),
            "a concatenated array": edit("rows = target.forward(list(fresh) + list(drafted), cache)",
                                         "rows = np.asarray(target.forward(np.concatenate([fresh, drafted]).astype(int).tolist(), cache))"),
        },
        "delegate": {
            "the course's verify_block, imported under another name": """
# Helpers you may call: none
from speclab.decoding.specloop import verify_block as one_pass
def verify_block(target, cache, fresh, drafted):
    return one_pass(target, cache, fresh, drafted)
""",
            "through the module attribute": """
# Helpers you may call: none
def verify_block(target, cache, fresh, drafted):
    return sl.verify_block(target, cache, fresh, drafted)
""",
        },
    },
    "speculative_generate": {
        "wrong": {
            "no rollback (the stale cache)": (edit("cache.truncate(len(context) + len(emitted) - 1)", ""),
                                              "greedy speculative decoding must give plain greedy"),
            "rolls back one token too few (keeps the first rejected draft)": edit(
                "cache.truncate(len(context) + len(emitted) - 1)", "cache.truncate(min(cache.length, len(context) + len(emitted)))"),
            "feeds the whole emitted block again next round": edit(
                ("cache.truncate(len(context) + len(emitted) - 1)", "cache.truncate(len(context))"),
                ("fresh = emitted[-1:]", "fresh = emitted")),
            "accepts with min(1, p) of the argmax, not p[x]": edit(
                "if rng.random() < p[x]:", "if rng.random() < p.max():"),
            "on rejection samples p itself (x not removed)": edit(
                "emitted.append(int(sample_from(without(p, x), rng.random())))", "emitted.append(int(sample_from(p, rng.random())))"),
            "no extra token after all drafts are kept": edit(
                "emitted.append(int(np.argmax(last)) if rng is None else int(sample_from(softmax(last), rng.random())))",
                "emitted.append(int(drafted[-1]) if drafted else int(np.argmax(last)))"),
            "rebuilds the cache every round": edit(
                "rows = verify_block(target, cache, fresh, drafted)",
                "cache = target.new_cache()\nrows = verify_block(target, cache, context, drafted)"),
            "returns numpy integers": (edit("return context[len(prompt):len(prompt) + n]",
                                            "return list(np.array(context[len(prompt):len(prompt) + n]))"), "plain Python ints"),
            "keeps the surplus of the last round": (edit("return context[len(prompt):len(prompt) + n]",
                                                         "return context[len(prompt):]"), "exactly n tokens"),
            "greedy keeps a draft the target ranks second": edit(
                "if emitted[-1] != x:", "if x not in np.argsort(rows[i])[-2:]:"),
        },
        "right": {
            "truncate counted from the cache's length": edit(
                "cache.truncate(len(context) + len(emitted) - 1)",
                "cache.truncate(cache.length - len(drafted) + len(emitted) - 1)"),
            "a softmax of its own in float64": edit(
                "p = softmax(rows[i])", "z = np.exp(rows[i].astype(float) - rows[i].max())\np = z / z.sum()"),
        },
        "delegate": {
            "the course's loop under another name": """
# Helpers you may call: verify_block, softmax, without, sample_from
from speclab.decoding.specloop import speculative_generate as loop
def speculative_generate(target, prompt, n, k, draft, rng=None):
    return loop(target, prompt, n, k, draft, rng)
""",
            "through the module attribute": """
# Helpers you may call: verify_block, softmax, without, sample_from
def speculative_generate(target, prompt, n, k, draft, rng=None):
    return sl.speculative_generate(target, prompt, n, k, draft, rng)
""",
        },
    },
    "prompt_lookup": {
        "wrong": {
            "the earliest occurrence, not the latest": edit(
                "for start in range(len(context) - n - 1, -1, -1):", "for start in range(0, len(context) - n):"),
            "shortest n-gram first": edit("for n in range(min(max_ngram, len(context) - 1), 0, -1):",
                                          "for n in range(1, min(max_ngram, len(context) - 1) + 1):"),
            "matches the tail against itself": edit("for start in range(len(context) - n - 1, -1, -1):",
                                                    "for start in range(len(context) - n, -1, -1):"),
            "returns the matched n-gram too": edit("return context[start + n:start + n + k]", "return context[start:start + n + k]"),
            "always k tokens, padding with the last": edit(
                "return context[start + n:start + n + k]",
                "out = context[start + n:start + n + k]\nreturn out + out[-1:] * (k - len(out))"),
            "only the 1-gram": edit("for n in range(min(max_ngram, len(context) - 1), 0, -1):", "for n in [1]:"),
        },
        "right": {
            "string search over a joined form": """
# Helpers you may call: none
def prompt_lookup(context, k, max_ngram=3):
    ctx = [int(t) for t in context]
    for n in range(min(max_ngram, len(ctx) - 1), 0, -1):
        hits = [s for s in range(len(ctx) - n) if ctx[s:s + n] == ctx[-n:]]
        if hits:
            return ctx[hits[-1] + n:hits[-1] + n + k]
    return []
""",
        },
        "delegate": {
            "the course's prompt lookup": """
# Helpers you may call: none
def prompt_lookup(context, k, max_ngram=3):
    return sl.prompt_lookup(context, k, max_ngram)
""",
        },
    },
    "generate_stale": {
        "wrong": {
            "rolls back anyway (the correct loop)": (edit("context += emitted", "cache.truncate(len(context) + len(emitted) - 1)\n"
                                                         "context += emitted"), "must differ from greedy"),
            "feeds the whole text every round (never stale)": edit(
                "rows = verify_block(target, cache, fresh, drafted)",
                "rows = verify_block(target, target.new_cache(), context, drafted)"),
            "also leaves the extra token out of the cache logic: feeds the emitted block": edit(
                "fresh = emitted[-1:]", "fresh = emitted"),
        },
        "right": {
            "counts its own way": edit("for i, x in enumerate(drafted):", "for i, x in zip(range(len(drafted)), drafted):"),
        },
        "delegate": {
            "the course's loop with its stale switch": """
# Helpers you may call: verify_block
def generate_stale(target, prompt, n, k, draft):
    return sl.speculative_generate(target, prompt, n, k, draft, stale=True)
""",
        },
    },
    "stale_cache_tv": {
        "wrong": {
            "no factor 0.5": edit("return float(0.5 * np.abs(p - p_stale).sum())", "return float(np.abs(p - p_stale).sum())"),
            "rejected tokens after the whole context": edit(
                ("if len(rejected):", "if True:"),
                ("target.forward(list(rejected), stale)", "target.forward(list(context[-1:]) + list(rejected), stale)")),
            "TV of the logits, not the distributions": edit(
                ("p = softmax(target.forward(list(context[-1:]), clean)[0])", "p = target.forward(list(context[-1:]), clean)[0]"),
                ("p_stale = softmax(target.forward(list(context[-1:]), stale)[0])",
                 "p_stale = target.forward(list(context[-1:]), stale)[0]")),
            "the stale cache without the context": edit("stale = clean.copy()", "stale = target.new_cache()"),
        },
        "right": {
            "two caches built from scratch": """
# Helpers you may call: softmax
def stale_cache_tv(target, context, rejected):
    a, b = target.new_cache(), target.new_cache()
    head, last = list(context[:-1]), list(context[-1:])
    p = softmax(target.forward(head + last, a)[-1])
    q = softmax(target.forward(head + list(rejected) + last, b)[-1])
    return float(np.abs(p - q).sum() / 2)
""",
        },
        "delegate": {
            "the course's measurement": """
# Helpers you may call: softmax
def stale_cache_tv(target, context, rejected):
    return sl.stale_cache_tv(target, context, rejected)
""",
        },
    },
    "what_the_target_read": {
        "wrong": {
            "the text before each token (what a loop that rolls its cache back reads)": (_SPLIT + """
def what_the_target_read(prompt, drafts, output):
    text, reads = [int(t) for t in prompt], []
    for drafted, emitted in rounds_of(drafts, output):
        for t in emitted:
            reads.append(list(text))
            text.append(int(t))
    return reads
""", "rolls its cache back"),
            "every leftover draft gathered just before the last token (Exercise E's case, generalised)": (_SPLIT + """
def what_the_target_read(prompt, drafts, output):
    text, left, reads = [int(t) for t in prompt], [], []
    for drafted, emitted in rounds_of(drafts, output):
        for t in emitted:
            reads.append(text[:-1] + left + text[-1:])
            text.append(int(t))
        left += list(drafted[len(emitted) - 1:])
    return reads
""", "Exercise E's case"),
            "the leftover drafts after the text": _SPLIT + """
def what_the_target_read(prompt, drafts, output):
    text, left, reads = [int(t) for t in prompt], [], []
    for drafted, emitted in rounds_of(drafts, output):
        for t in emitted:
            reads.append(text + left)
            text.append(int(t))
        left += list(drafted[len(emitted) - 1:])
    return reads
""",
            "the old question's answer: a count of leftovers per token": (_SPLIT + """
def what_the_target_read(prompt, drafts, output):
    out, junk = [], 0
    for drafted, emitted in rounds_of(drafts, output):
        out += [junk] * len(emitted)
        junk += len(drafted) - (len(emitted) - 1)
    return out
""", "not a single number"),
            "every round split as if it kept all its drafts (the accept rule not replayed)": (edit(
                ("while kept < len(drafted) and int(output[at + kept]) == drafted[kept]:",
                 "while kept < len(drafted) and at + kept + 1 < len(output):"),
                ("fresh = [emitted[-1]]", "fresh = [emitted[-1]] if emitted else fresh")), "ends in a row up to"),
            "every round split as if it kept none of its drafts": edit(
                "while kept < len(drafted) and int(output[at + kept]) == drafted[kept]:", "while False:"),
            "the kept drafts counted one too many (the target's token taken for a draft)": (edit(
                "emitted = [int(t) for t in output[at:at + kept + 1]]   # the kept drafts, then the target's own token",
                "emitted = [int(t) for t in output[at:at + min(kept + 2, len(drafted) + 1)]]"), "what_the_target_read raised"),
            "every row reads the whole verify pass (no causal mask)": edit(
                "reads.append(cache + fed[:len(fresh) + i])", "reads.append(cache + fed)"),
            "each row reads the token it chose (one row late)": edit(
                "reads.append(cache + fed[:len(fresh) + i])", "reads.append(cache + fed[:len(fresh) + i + 1])"),
            "the emitted token never fed to the next round": edit(
                "fresh = [emitted[-1]]", "fresh = []"),
            "the correction written over the first rejected draft's slot": edit(
                ("cache += fed                           # never cut back: every draft stays where it was fed",
                 "cache += fresh + emitted + drafted[len(emitted):]"),
                ("fresh = [emitted[-1]]", "fresh = []")),
        },
        "right": {
            "one log, sliced by lengths": _SPLIT + """
def what_the_target_read(prompt, drafts, output):
    log, ends, first = [], [], True
    for drafted, emitted in rounds_of(drafts, output):
        fed = list(prompt) if first else [emitted_before[-1]]
        start = len(log) + len(fed)
        log += fed + list(drafted)
        ends += [start + i for i in range(len(emitted))]
        emitted_before, first = emitted, False
    return [[int(t) for t in log[:end]] for end in ends]
""",
            "rounds found by walking a pointer through output": """
# Helpers you may call: none
def what_the_target_read(prompt, drafts, output):
    log, fresh, reads, pos = [], list(prompt), [], 0
    for drafted in drafts:
        seen = log + list(fresh)
        for i, x in enumerate(list(drafted) + [None]):
            reads.append(seen + list(drafted[:i]))
            pos += 1
            if x is None or output[pos - 1] != x:
                break
        log, fresh = seen + list(drafted), [output[pos - 1]]
    return [[int(t) for t in r] for r in reads]
""",
        },
        "delegate": {
            "the course's verify_block over a model that reads out its cache": _SPLIT + """
from speclab.decoding.specloop import verify_block as one_pass
class _Log:
    def forward(self, tokens, cache):
        start = len(cache)
        cache.extend(int(t) for t in tokens)
        return [list(cache[:start + i + 1]) for i in range(len(tokens))]
def what_the_target_read(prompt, drafts, output):
    cache, fresh, reads = [], list(prompt), []
    for drafted, emitted in rounds_of(drafts, output):
        reads += one_pass(_Log(), cache, fresh, drafted)[:len(emitted)]
        fresh = [emitted[-1]]
    return reads
""",
        },
    },
}
