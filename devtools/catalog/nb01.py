"""Wrong and right answers for 01_branch_prediction."""
AID = "01_branch_prediction"

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
            "argmax down a column instead of along a row": '''
def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n):
        t = int(np.argmax(P[:, t])); tokens.append(t)
    return tokens, n
''',
            "one token too many": '''
def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n + 1):
        t = int(np.argmax(P[t])); tokens.append(t)
    return tokens, n + 1
''',
            "counts one call for the whole loop": '''
def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n):
        t = int(np.argmax(P[t])); tokens.append(t)
    return tokens, 1
''',
            "hard-coded for the six-token table": '''
def greedy_decode(P, ctx, n):
    cycle = [4, 5, 0]
    return [cycle[i % 3] for i in range(n)], n
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
            "max over indices": '''
def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n):
        row = P[t]
        t = max(range(len(row)), key=lambda i: row[i])
        tokens.append(t)
    return tokens, n
''',
        },
    },
    "speculative_greedy": {
        "wrong": {
            "no bonus token after k agreements": '''
def speculative_greedy(P, Q, ctx, n, k):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += 1
        prefix = t
        for x in g:
            c = int(np.argmax(P[prefix])); tokens.append(c)
            if c != x:
                break
            prefix = x
        t = tokens[-1]
    return tokens[:n], calls
''',
            "guess checked against the row of the guess itself (off by one)": '''
def speculative_greedy(P, Q, ctx, n, k):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += 1
        for i, x in enumerate(g):
            c = int(np.argmax(P[x]))
            if c != x:
                tokens.append(c); break
            tokens.append(x)
        else:
            tokens.append(int(np.argmax(P[g[-1]])))
        t = tokens[-1]
    return tokens[:n], calls
''',
            "keeps the guesses after a disagreement": '''
def speculative_greedy(P, Q, ctx, n, k):
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
''',
            "counts k + 1 target calls per round": '''
def speculative_greedy(P, Q, ctx, n, k):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += k + 1
        prefix = t
        for x in g:
            c = int(np.argmax(P[prefix])); tokens.append(c)
            if c != x:
                break
            prefix = x
        else:
            tokens.append(int(np.argmax(P[prefix])))
        t = tokens[-1]
    return tokens[:n], calls
''',
            "does not trim to n tokens": '''
def speculative_greedy(P, Q, ctx, n, k):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += 1
        prefix = t
        for x in g:
            c = int(np.argmax(P[prefix])); tokens.append(c)
            if c != x:
                break
            prefix = x
        else:
            tokens.append(int(np.argmax(P[prefix])))
        t = tokens[-1]
    return tokens, calls
''',
            "emits the draft's guess instead of the target's correction": '''
def speculative_greedy(P, Q, ctx, n, k):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += 1
        prefix = t
        for x in g:
            tokens.append(x)
            if int(np.argmax(P[prefix])) != x:
                break
            prefix = x
        else:
            tokens.append(int(np.argmax(P[prefix])))
        t = tokens[-1]
    return tokens[:n], calls
''',
            "calls the plain decoder and fakes the count": '''
def speculative_greedy(P, Q, ctx, n, k):
    toks, _ = greedy_decode(P, ctx, n)
    return toks, -(-n // (k + 1))
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
    "keep_drafts_greedy": {
        "wrong": {
            "not broken at all (the correct round)": '''
def keep_drafts_greedy(P, Q, ctx, n, k):
    return speculative_greedy(P, Q, ctx, n, k)
''',
            "keeps the stale guesses but drops the target's correction": '''
def keep_drafts_greedy(P, Q, ctx, n, k):
    tokens, calls, t = [], 0, ctx
    while len(tokens) < n:
        g, d = [], t
        for _ in range(k):
            d = int(np.argmax(Q[d])); g.append(d)
        calls += 1
        prefix = t
        for i, x in enumerate(g):
            c = int(np.argmax(P[prefix]))
            if c != x:
                tokens.extend(g[i:]); break
            tokens.append(c); prefix = x
        else:
            tokens.append(int(np.argmax(P[prefix])))
        t = tokens[-1]
    return tokens[:n], calls
''',
            "next round starts from the target's correction, not the last emitted token": '''
def keep_drafts_greedy(P, Q, ctx, n, k):
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
                tokens.extend(g[i + 1:]); nxt = c; break
            prefix = x
        else:
            nxt = int(np.argmax(P[prefix])); tokens.append(nxt)
        t = nxt
    return tokens[:n], calls
''',
        },
        "right": {
            "slicing form": '''
def keep_drafts_greedy(P, Q, ctx, n, k):
    out, calls, t = [], 0, ctx
    while len(out) < n:
        g = []
        for _ in range(k):
            g.append(int(np.argmax(Q[g[-1] if g else t])))
        calls += 1
        want = [int(np.argmax(P[x])) for x in [t] + g]
        j = 0
        while j < k and g[j] == want[j]:
            j += 1
        out += g[:j] + [want[j]] + (g[j + 1:] if j < k else [])
        t = out[-1]
    return out[:n], calls
''',
        },
    },
    "first_divergence": {
        "wrong": {
            "None when one list is a prefix of the other": '''
def first_divergence(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None
''',
            "counts from 1": '''
def first_divergence(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1
    return None if len(a) == len(b) else min(len(a), len(b)) + 1
''',
            "returns -1 for identical lists": '''
def first_divergence(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return -1 if len(a) == len(b) else min(len(a), len(b))
''',
        },
        "right": {
            "numpy": '''
def first_divergence(a, b):
    a, b = np.asarray(a), np.asarray(b)
    m = min(len(a), len(b))
    diff = np.flatnonzero(a[:m] != b[:m])
    if diff.size:
        return int(diff[0])
    return None if len(a) == len(b) else m
''',
        },
    },
}
