"""Wrong and right answers for 01_branch_prediction."""
from devtools.catalog import edit

AID = "01_branch_prediction"

# The line of drift's reference that most of its mistakes rewrite.
_SHARE = "return sum(int(a != b) for a, b in zip(broken, plain)) / n"
# The line of mistake_share's reference that its mistakes rewrite.
_RATIO = "return k * (1 - a) / ((m - 1) * per_verified + k)"

CATALOG = {
    "greedy_decode": {
        "wrong": {
            "context included in the output": '''
def greedy_decode(P, ctx, n):
    tokens, t = [ctx], ctx
    for _ in range(n - 1):
        t = int(np.argmax(P[t])); tokens.append(t)
    return tokens, n
''',
            "never moves on from the context": '''
def greedy_decode(P, ctx, n):
    return [int(np.argmax(P[ctx]))] * n, n
''',
            "argmax down a column instead of along a row": edit("t = int(np.argmax(P[t]))", "t = int(np.argmax(P[:, t]))"),
            "one token too many": '''
def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n + 1):
        t = int(np.argmax(P[t])); tokens.append(t)
    return tokens, n + 1
''',
            "counts one call for the whole loop": edit("return tokens, n", "return tokens, 1"),
            "hard-coded for the six-token table": '''
def greedy_decode(P, ctx, n):
    cycle = [4, 5, 0]
    return [cycle[i % 3] for i in range(n)], n
''',
        },
        "delegate": {
            "the course's reference, imported under another name": '''
from speclab.rules.speculative import greedy_decode as plain_loop
def greedy_decode(P, ctx, n):
    return plain_loop(P, ctx, n)
''',
            "the reference through the notebook's `ref` module": '''
def greedy_decode(P, ctx, n):
    return ref.greedy_decode(P, ctx, n)
''',
            "another exercise's reference: speculative_greedy with the target as its own draft": '''
import speclab
def greedy_decode(P, ctx, n):
    tokens, _ = speclab.rules.speculative.speculative_greedy(P, P, ctx, n, 1)
    return tokens, n
''',
        },
        "right": {
            "while loop with numpy ints converted": '''
def greedy_decode(P, ctx, n):
    out = []
    while len(out) < n:
        out.append(int(P[out[-1] if out else ctx].argmax()))
    return out, len(out)
''',
            "max over indices": edit("t = int(np.argmax(P[t]))", '''
row = P[t]
t = max(range(len(row)), key=lambda i: row[i])
'''),
        },
    },
    "speculative_greedy": {
        "wrong": {
            "no bonus token after k agreements": edit('''
else:
    tokens.append(int(np.argmax(P[prefix])))
''', ""),
            "guess checked against the row of the guess itself (off by one)": edit("choice = int(np.argmax(P[prefix]))", "choice = int(np.argmax(P[x]))"),
            "keeps the guesses after a disagreement": edit(("for x in guesses:", "for i, x in enumerate(guesses):"), ("break", '''
tokens.extend(guesses[i + 1:])
break
''')),
            "counts k + 1 target calls per round": edit("calls += 1", "calls += k + 1"),
            "does not trim to n tokens": edit("return tokens[:n], calls", "return tokens, calls"),
            "emits the draft's guess instead of the target's correction": edit('''
choice = int(np.argmax(P[prefix]))
tokens.append(choice)
if choice != x:
''', '''
tokens.append(x)
if int(np.argmax(P[prefix])) != x:
'''),
            "calls the plain decoder and fakes the count": '''
def speculative_greedy(P, Q, ctx, n, k):
    toks, _ = greedy_decode(P, ctx, n)
    return toks, -(-n // (k + 1))
''',
        },
        "delegate": {
            "the course's reference through a module attribute": '''
import speclab.rules.speculative as course
def speculative_greedy(P, Q, ctx, n, k):
    return course.speculative_greedy(P, Q, ctx, n, k)
''',
            "the broken reference with trust switched off (m larger than any round count)": '''
def speculative_greedy(P, Q, ctx, n, k):
    return ref.trusting_greedy(P, Q, ctx, n, k, 10 ** 9)
''',
        },
        "right": {
            "vectorised check of the whole round": '''
def speculative_greedy(P, Q, ctx, n, k):
    out, calls, t = [], 0, ctx
    while len(out) < n:
        g = []
        for _ in range(k):
            g.append(int(np.argmax(Q[g[-1] if g else t])))
        calls += 1
        want = np.argmax(P[[t] + g], axis=1)       # k + 1 answers from one pass
        agree = np.cumprod(np.array(g) == want[:k])
        j = int(agree.sum())
        out.extend(g[:j] + [int(want[j])])
        t = out[-1]
    return out[:n], calls
''',
        },
    },
    "trusting_greedy": {
        "wrong": {
            "not broken at all (every round verified)": ("""
def trusting_greedy(P, Q, ctx, n, k, m):
    return speculative_greedy(P, Q, ctx, n, k)
""", "trusts every round"),
            "rounds counted from 0: round 1 is trusted": (edit(("round_no += 1", ""), ("t = tokens[-1]", '''
round_no += 1
t = tokens[-1]
''')), "rounds count from 1"),
            "a trusted round still counts a target call": (edit(
                ("calls += 1\nprefix = t", "prefix = t"),
                ("if round_no % m == 0:", "calls += 1\nif round_no % m == 0:")), "no target call"),
            "a trusted round adds the bonus token too": (edit('''
    tokens.extend(guesses)
else:
''', '''
    tokens.extend(guesses)
    tokens.append(int(np.argmax(P[guesses[-1]])))
else:
'''), "no bonus"),
            "after a trusted round the next one drafts from the old start token": edit("tokens.extend(guesses)", "tokens.extend(guesses)\ncontinue"),
            "the condition inverted: trusts every round except the m-th": edit("if round_no % m == 0:", "if round_no % m != 0:"),
            "a trusted round writes the target's own choices, unpaid for": (edit("tokens.extend(guesses)", '''
d = t
for _ in range(k):
    d = int(np.argmax(P[d]))
    tokens.append(d)
'''), "got the target's own text"),
            "the other break: keeps the guesses after a disagreement, never skips a check": """
def trusting_greedy(P, Q, ctx, n, k, m):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += 1
        prefix = t
        for i, x in enumerate(g):
            c = int(np.argmax(P[prefix])); tokens.append(c)
            if c != x:
                tokens.extend(g[i + 1:]); break
            prefix = x
        else:
            tokens.append(int(np.argmax(P[prefix])))
        t = tokens[-1]
    return tokens[:n], calls
""",
            "does not trim to n tokens": edit("return tokens[:n], calls", "return tokens, calls"),
        },
        "right": {
            "vectorised check, and a countdown to the next trusted round": """
def trusting_greedy(P, Q, ctx, n, k, m):
    out, calls, t, left = [], 0, ctx, m
    while len(out) < n:
        g = []
        for _ in range(k):
            g.append(int(np.argmax(Q[g[-1] if g else t])))
        left -= 1
        if left == 0:
            out += g
            left = m
        else:
            calls += 1
            want = np.argmax(P[[t] + g], axis=1)
            j = int(np.cumprod(np.array(g) == want[:k]).sum())
            out += g[:j] + [int(want[j])]
        t = out[-1]
    return out[:n], calls
""",
            "one round at a time through a helper of its own": """
def trusting_greedy(P, Q, ctx, n, k, m):
    def one_round(t, trusted):
        g = [int(np.argmax(Q[t]))]
        while len(g) < k:
            g.append(int(np.argmax(Q[g[-1]])))
        if trusted:
            return g, 0
        emitted, prefix = [], t
        for x in g:
            c = int(np.argmax(P[prefix]))
            emitted.append(c)
            if c != x:
                return emitted, 1
            prefix = x
        return emitted + [int(np.argmax(P[prefix]))], 1
    tokens, calls, r = [], 0, 0
    while len(tokens) < n:
        r += 1
        emitted, cost = one_round(tokens[-1] if tokens else ctx, r % m == 0)
        tokens += emitted
        calls += cost
    return tokens[:n], calls
""",
        },
        "delegate": {
            "the course's broken reference, imported under another name": """
from speclab.rules.speculative import trusting_greedy as lazy
def trusting_greedy(P, Q, ctx, n, k, m):
    return lazy(P, Q, ctx, n, k, m)
""",
            "the broken reference through the notebook's `ref` module": """
def trusting_greedy(P, Q, ctx, n, k, m):
    return ref.trusting_greedy(P, Q, ctx, n, k, m)
""",
        },
    },
    "drift": {
        "wrong": {
            "the notebook's printed setting (from 'a', k = 4) for the course's drafts, honest otherwise": ("""
def drift(P, Q, ctx, n, k, m):
    if n == 48 and any(np.array_equal(Q, draft(kind)) for kind in ("good", "middling", "poor")):
        ctx, k = 0, 4   # recalls the printed numbers, whatever was asked
    broken, _ = trusting_greedy(P, Q, ctx, n, k, m)
    plain, _ = greedy_decode(P, ctx, n)
    return sum(int(a != b) for a, b in zip(broken, plain)) / n
""", "with exactly these settings"),
            "returns the number of differences, not the fraction": (edit(
                _SHARE,
                "return sum(x != y for x, y in zip(broken, plain))"), "not a count"),
            "the fraction that agree": edit(
                _SHARE,
                "return sum(x == y for x, y in zip(broken, plain)) / n"),
            "the first position where the outputs part": edit(_SHARE, '''
for i, (x, y) in enumerate(zip(broken, plain)):
    if x != y:
        return i
return 0.0
'''),
            "integer division": edit(
                _SHARE,
                "return sum(x != y for x, y in zip(broken, plain)) // n"),
            "compares the sets of tokens, not positions": edit(
                _SHARE,
                "return len(set(broken) ^ set(plain)) / n"),
            "the share of the positions from the first difference on": edit(_SHARE, '''
diff = [i for i, (x, y) in enumerate(zip(broken, plain)) if x != y]
return 0.0 if not diff else len(diff) / (n - diff[0])
'''),
            "k and m swapped in the call": """
def drift(P, Q, ctx, n, k, m):
    a, _ = trusting_greedy(P, Q, ctx, n, m, k)
    b, _ = greedy_decode(P, ctx, n)
    return sum(x != y for x, y in zip(a, b)) / n
""",
            "compares with the draft's own greedy output": """
def drift(P, Q, ctx, n, k, m):
    a, _ = trusting_greedy(P, Q, ctx, n, k, m)
    b, _ = greedy_decode(Q, ctx, n)
    return sum(x != y for x, y in zip(a, b)) / n
""",
        },
        "right": {
            "numpy mean of the comparison": """
def drift(P, Q, ctx, n, k, m):
    a = np.array(trusting_greedy(P, Q, ctx, n, k, m)[0])
    b = np.array(greedy_decode(P, ctx, n)[0])
    return float(np.mean(a != b))
""",
            "against honest speculation, which gives the same tokens": """
def drift(P, Q, ctx, n, k, m):
    a, _ = trusting_greedy(P, Q, ctx, n, k, m)
    b, _ = speculative_greedy(P, Q, ctx, n, k)
    wrong = 0
    for i in range(n):
        if a[i] != b[i]:
            wrong += 1
    return wrong / n
""",
        },
        "delegate": {
            "measured with the course's reference functions, not the student's own": """
import speclab.rules.speculative as S
def drift(P, Q, ctx, n, k, m):
    a = S.trusting_greedy(P, Q, ctx, n, k, m)[0]
    b = S.greedy_decode(P, ctx, n)[0]
    return sum(x != y for x, y in zip(a, b)) / n
""",
        },
    },
    "mistake_share": {
        "wrong": {
            "every token an unchecked guess, as if every round were trusted (the transcriber's nearest line)": (
                edit(_RATIO, "return 1 - a"), "as if every round were trusted"),
            "one round in m, as if the trusted rounds wrote one m-th of the text": (
                edit(_RATIO, "return (1 - a) / m"), "as if the trusted rounds wrote one m-th"),
            "a bonus token in the trusted round": edit(_RATIO, "return k * (1 - a) / ((m - 1) * per_verified + k + 1)"),
            "m verified rounds between trusted ones, not m - 1": edit(_RATIO, "return k * (1 - a) / (m * per_verified + k)"),
            "over m rounds of a verified round's size": edit(_RATIO, "return k * (1 - a) / (m * per_verified)"),
            "over the verified rounds' tokens only": edit(_RATIO, "return k * (1 - a) / max((m - 1) * per_verified, 1e-300)"),
            "every verified round keeps all its guesses": edit(_RATIO, "return k * (1 - a) / ((m - 1) * (k + 1) + k)"),
            "a verified round's tokens without the target's own (a + ... + a^k)": edit(
                _RATIO, "return k * (1 - a) / ((m - 1) * (per_verified - 1) + k)"),
            "every token from a trusted round's first mistake on, as drift would count them": edit(
                _RATIO, "return sum(1 - a ** j for j in range(1, k + 1)) / ((m - 1) * per_verified + k)"),
            "the chance that a trusted round holds a mistake, one round in m": edit(_RATIO, "return (1 - a ** k) / m"),
            "the share of the tokens that are right": edit(_RATIO, "return 1 - k * (1 - a) / ((m - 1) * per_verified + k)"),
        },
        "right": {
            "a cycle of m rounds counted out, with the a = 1 case apart": """
def mistake_share(a, k, m):
    if a == 1:
        return 0.0
    verified = (1 - a ** (k + 1)) / (1 - a)
    tokens = (m - 1) * verified + k
    wrong = k * (1 - a)
    return float(wrong / tokens)
""",
            "the share of the text in trusted rounds, times the chance a trusted token is wrong": """
import numpy as np
def mistake_share(a, k, m):
    kept = float(np.sum(np.power(a, np.arange(k + 1))))
    in_trusted = k / (k + (m - 1) * kept)
    return in_trusted * (1.0 - a)
""",
        },
        "delegate": {
            "the verified round's tokens from the course's expected_tokens": """
from speclab.speed import costs as _c
def mistake_share(a, k, m):
    return k * (1 - a) / ((m - 1) * float(_c.expected_tokens(a, k)) + k)
""",
        },
    },
}
