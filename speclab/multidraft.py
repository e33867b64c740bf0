"""Beyond one draft (notebook 09): several candidates per position, token trees, self-drafting, adaptive k.

One concern: what a verify pass can check besides a single chain of drafts, and what keeps
it exact. Reference versions of notebook 09's exercises live here, with the exact
enumerations that prove them and the small models the notebook measures.

Several candidates at one position (target p, draft q, n candidates):
  "mss"        SpecInfer's multi-step speculative sampling (Miao et al. 2024, Algorithm 2,
               VerifyStochastic): candidates drawn from q with replacement; each is tested
               against the CURRENT residual r, and after a rejection r <- norm(max(0, r - q));
               after n rejections one sample of the last residual.
  "recursive"  recursive rejection sampling (Jeon et al. 2024): candidates drawn WITHOUT
               replacement (candidate i from q with the earlier ones removed, renormalised:
               q_i); candidate i is tested against r with q_i, and r <- norm(max(0, r - q_i)).
  "shortcut"   BROKEN on purpose (the notebook's break-it): every candidate is tested against
               the ORIGINAL p, the first that passes is kept, and after n rejections one sample
               of residual(p, q). For n = 1 it is the correct rule; for n >= 2 it is biased.

Randomness (the course contract, extended to n candidates): the n candidates first, one
rng.random() each through sample_from; then candidate by candidate one rng.random() per accept
test, stopping at the first acceptance; after n rejections one rng.random() for the final
sample. So a call uses n + i uniforms (accepted at test i) or 2n + 1 (none accepted).

    draw_candidates(q, n, rng, replace=True)        the n candidates
    mss_sample / recursive_sample / shortcut_sample (p, q, n, rng) -> one token
    scripted_position(p, q, n, uniforms, rule)       the same, in plain Python, for hidden tests
    shortcut_tv_formula(p, q, n)                     the shortcut's TV from p, in closed form
    walk(p, q, cands, rule)                          output distribution given the candidates
    enumerate_output(p, q, n, walk, replace=True)    exact output distribution, by enumeration
    exact_output(p, q, n, rule)                      the same, vectorised over every tuple
    accepted_at(p, q, n, rule)                       P(candidate i is kept and is token y)
    acceptance(p, q, n, rule)                        P(some candidate is kept)

Token trees (the toy Markov tables; a tree is a nested tuple of children, tested in order):
    chain(k), full_tree(widths), tree_nodes, tree_depth, tree_parents, tree_mask
    accept_matrices(P, Q, width, rule)   M[i][c, y] = P(child i of a node at context c is kept as y)
    tree_accepted(P, Q, tree, rule)      expected accepted tokens per verify pass, per context
    positional_acceptance(P, Q, width)   a_i averaged over the target's stationary contexts
    greedy_tree(a, budget)               the budget nodes of largest value prod(a along the path)
    tree_speedup(tree, E, ...)           07's per-kernel step times, at a context: a draft pass per level,
                                         one verify pass

Self-drafting (08's character models):
    skip_counts(ids, m, V, gap=1), build_skip_tables(ids, max_order, V, gap=1)
    head_draft(tables, order, V, gap=1)  a draft that proposes the token after next from the
                                         context without its last `gap` tokens (a Medusa-style head)

Adaptive k:
    confident_draft(draft, context, k_max, threshold, rng)
    generate_adaptive(target, draft, context, n, k_max, threshold, rng) -> AdaptiveRun
"""
import heapq
import itertools
from dataclasses import dataclass, field

import numpy as np

from .ngram import NGram
from .sampling import sample_from
from .speculative import residual

# How several candidates are verified at one position (not speclab.speculative.RULES, the one-draft rules).
MULTIDRAFT_METHODS = ("mss", "recursive", "shortcut")


def _check_rule(rule):
    if rule not in MULTIDRAFT_METHODS:
        raise ValueError(f"rule must be one of {MULTIDRAFT_METHODS}, got {rule!r}")


def _without(q, x):
    """q with token x removed, renormalised (the next draw of sampling without replacement)."""
    q = np.array(q, dtype=float)
    q[x] = 0.0
    s = q.sum()
    return q / s if s > 0 else q


# --- several candidates at one position: samplers --------------------------------------------

def draw_candidates(q, n, rng, replace=True):
    """n candidates from q, one rng.random() each through sample_from; without replacement,
    candidate i is drawn from q with candidates 1..i-1 removed and renormalised."""
    q = np.asarray(q, dtype=float)
    cands, qi = [], q
    for _ in range(n):
        x = sample_from(qi, rng.random())
        cands.append(int(x))
        if not replace:
            qi = _without(qi, x)
    return cands


def mss_sample(p, q, n, rng):
    """One token distributed as p: SpecInfer's multi-step speculative sampling with n candidates."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = draw_candidates(q, n, rng)
    r = p
    for x in cands:
        if rng.random() * q[x] < r[x]:
            return x
        r = residual(r, q)
    return int(sample_from(r, rng.random()))


def recursive_sample(p, q, n, rng):
    """One token distributed as p: recursive rejection sampling, n candidates without replacement."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = draw_candidates(q, n, rng, replace=False)
    r, qi = p, q
    for x in cands:
        if rng.random() * qi[x] < r[x]:
            return x
        r = residual(r, qi)
        qi = _without(qi, x)
    return int(sample_from(r, rng.random()))


def shortcut_sample(p, q, n, rng):
    """BROKEN on purpose: every candidate tested against the original p; residual(p, q) at the end."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    cands = draw_candidates(q, n, rng)
    for x in cands:
        if rng.random() * q[x] < p[x]:
            return x
    return int(sample_from(residual(p, q), rng.random()))


SAMPLERS = {"mss": mss_sample, "recursive": recursive_sample, "shortcut": shortcut_sample}


def scripted_position(p, q, n, uniforms, rule):
    """(token, uniforms used) of one position under `rule` ("mss", "recursive" or "shortcut"), in plain
    Python: no numpy, so a notebook's hidden tests can trust it whatever a student's cell did to numpy.

    The course's randomness contract with the uniforms given as a list: the n candidates first (one
    uniform each, sample_from's rule: the smallest i with cumsum > u), then one uniform per accept
    test (keep x iff u * q_i[x] < r[x]), stopping at the first acceptance, then one more after n
    rejections. Notebook 09's hidden tests grade its samplers against this.
    """
    def plain(x):
        return [float(v) for v in (x.ravel().tolist() if hasattr(x, "ravel") else x)]

    def res(r, q):
        d = [max(0.0, a - b) for a, b in zip(r, q)]
        s = sum(d)
        return [v / s for v in d] if s > 0 else list(r)

    def draw(dist, u):
        c = 0.0
        for i, v in enumerate(dist):
            c += v
            if c > u:
                return i
        return max(i for i, v in enumerate(dist) if v > 0)

    def without(q, x):
        q = [0.0 if i == x else v for i, v in enumerate(q)]
        s = sum(q)
        return [v / s for v in q] if s > 0 else q

    _check_rule(rule)
    p, q, us, k = plain(p), plain(q), list(uniforms), 0
    cands, qs, qi = [], [], q
    for _ in range(n):
        cands.append(draw(qi, us[k]))
        qs.append(qi)
        k += 1
        if rule == "recursive":
            qi = without(qi, cands[-1])
    r = p
    for x, qi in zip(cands, qs):
        u = us[k]
        k += 1
        if u * qi[x] < (p if rule == "shortcut" else r)[x]:
            return x, k
        if rule != "shortcut":
            r = res(r, qi)
    return draw(res(p, q) if rule == "shortcut" else r, us[k]), k + 1


def shortcut_tv_formula(p, q, n):
    """The shortcut's exact TV from p in closed form: beta (1 - beta^(n-1)) TV(norm(min(p, q)), residual(p, q)),
    with beta = 1 - sum min(p, q). 0 when beta is 0 (nothing is rejected) or 1 (p and q share no token: every
    candidate is rejected and the residual is p); the shortcut is exact in both cases."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    overlap = np.minimum(p, q)
    beta = 1.0 - overlap.sum()
    if beta <= 0 or beta >= 1:
        return 0.0
    return float(beta * (1 - beta ** (n - 1)) * 0.5 * np.abs(overlap / overlap.sum() - residual(p, q)).sum())


# --- several candidates: exact output distributions -------------------------------------------

def walk(p, q, cands, rule):
    """The output distribution of one position once the candidates are known (accept uniforms
    integrated out): candidate i is kept with min(1, r(x)/q_i(x)) if the ones before it were not."""
    _check_rule(rule)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    out, stay, r, qi = np.zeros_like(p), 1.0, p, q
    for x in cands:
        test = p if rule == "shortcut" else r
        a = min(1.0, test[x] / qi[x])
        out[x] += stay * a
        stay *= 1.0 - a
        if rule != "shortcut":
            r = residual(r, qi)
        if rule == "recursive":
            qi = _without(qi, x)
    return out + stay * (residual(p, q) if rule == "shortcut" else r)


def enumerate_output(p, q, n, walk, replace=True):
    """Exact output distribution: the sum over every tuple of n candidates of
    P(tuple) * walk(p, q, tuple). P(tuple) = prod q(x_i) with replacement; without, each factor
    is the probability of x_i under q with the earlier candidates removed (0 for a repeat)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    total = np.zeros(len(p))
    for cands in itertools.product(range(len(q)), repeat=n):
        weight, qi = 1.0, q
        for x in cands:
            weight *= qi[x]
            if not replace:
                qi = _without(qi, x)
        if weight > 0:
            total += weight * walk(p, q, cands)
    return total


def _tuples(q, n, replace):
    """(cands (M, n), prob (M,), qs (M, n, V)): every tuple with positive probability, vectorised."""
    q = np.asarray(q, dtype=float)
    V = len(q)
    cands = np.array(list(itertools.product(range(V), repeat=n)), dtype=np.int64).reshape(-1, n)
    prob = np.ones(len(cands))
    qs = np.empty((len(cands), n, V))
    qi = np.broadcast_to(q, (len(cands), V)).copy()
    rows = np.arange(len(cands))
    for i in range(n):
        qs[:, i] = qi
        prob *= qi[rows, cands[:, i]]
        if not replace:
            qi[rows, cands[:, i]] = 0.0
            s = qi.sum(axis=1, keepdims=True)
            qi = np.divide(qi, s, out=np.zeros_like(qi), where=s > 0)
    keep = prob > 0
    return cands[keep], prob[keep], qs[keep]


def _residuals(r, q):
    """Row-wise residual(r, q) for (M, V) arrays (rows with no positive mass keep r)."""
    d = np.clip(r - q, 0.0, None)
    s = d.sum(axis=1, keepdims=True)
    return np.where(s > 0, d / np.where(s > 0, s, 1.0), r / r.sum(axis=1, keepdims=True))


def accepted_at(p, q, n, rule="mss"):
    """(A, final): A[i, y] = P(candidate i+1 is the one kept and it is token y); final[y] = P(all n
    are rejected and the final sample is y). A.sum(0) + final is the output distribution."""
    _check_rule(rule)
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    V = len(p)
    cands, prob, qs = _tuples(q, n, replace=rule != "recursive")
    M = len(cands)
    rows = np.arange(M)
    r = np.broadcast_to(p, (M, V)).copy()
    stay = prob.copy()
    A = np.zeros((n, V))
    for i in range(n):
        x, qi = cands[:, i], qs[:, i]
        test = np.broadcast_to(p, (M, V)) if rule == "shortcut" else r
        a = np.minimum(1.0, test[rows, x] / qi[rows, x])
        np.add.at(A[i], x, stay * a)
        stay = stay * (1.0 - a)
        if rule != "shortcut":
            r = _residuals(r, qi)
    fallback = np.broadcast_to(residual(p, q), (M, V)) if rule == "shortcut" else r
    return A, stay @ fallback


def exact_output(p, q, n, rule="mss"):
    """The exact output distribution of one position with n candidates under `rule`."""
    A, final = accepted_at(p, q, n, rule)
    return A.sum(axis=0) + final


def acceptance(p, q, n, rule="mss"):
    """P(one of the n candidates is kept): 1 - P(all rejected)."""
    A, _ = accepted_at(p, q, n, rule)
    return float(A.sum())


def mss_acceptance_curve(p, q, n_max):
    """[P(some of n candidates kept) for n = 1..n_max] under "mss", in closed form: 1 - prod of the
    rejection probabilities 1 - sum min(r_j, q) of the successive residuals. Works on (..., V) arrays."""
    r, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    reject, out = np.ones(r.shape[:-1]), []
    for _ in range(n_max):
        beta = 1.0 - np.minimum(r, q).sum(axis=-1)
        reject = reject * np.clip(beta, 0.0, 1.0)
        out.append(1.0 - reject)
        d = np.clip(r - q, 0.0, None)
        s = d.sum(axis=-1, keepdims=True)
        r = np.where(s > 0, d / np.where(s > 0, s, 1.0), r)
    return np.stack(out, axis=-1)


# --- token trees ------------------------------------------------------------------------------

def chain(k):
    """A chain of k drafted tokens: each node has one child."""
    tree = ()
    for _ in range(k):
        tree = (tree,)
    return tree


def full_tree(widths):
    """Every node at depth d has widths[d] children (SpecInfer's expansion configuration <k1, k2, ...>)."""
    tree = ()
    for w in reversed(list(widths)):
        tree = (tree,) * w
    return tree


def tree_nodes(tree):
    """Drafted nodes in the tree (the root, the last accepted token, is not counted)."""
    return sum(1 + tree_nodes(child) for child in tree)


def tree_depth(tree):
    return 1 + max(map(tree_depth, tree)) if tree else 0


def tree_parents(tree):
    """(parents, depth) in depth-first order: node j's parent index (0 = the root, position 0)."""
    parents, depths = [-1], [0]

    def visit(node, me):
        for child in node:
            parents.append(me)
            depths.append(depths[me] + 1)
            visit(child, len(parents) - 1)

    visit(tree, 0)
    return parents, depths


def tree_mask(tree):
    """(N+1) x (N+1) boolean tree attention mask over [root] + nodes (depth-first order):
    position i may attend to position j iff j is i or one of i's ancestors."""
    parents, _ = tree_parents(tree)
    n = len(parents)
    mask = np.zeros((n, n), dtype=bool)
    for i in range(n):
        j = i
        while j >= 0:
            mask[i, j] = True
            j = parents[j]
    return mask


def accept_matrices(P, Q, width, rule="mss"):
    """[M_1, ..., M_width]: M_i[c, y] = P(child i of a node at context c is the one kept, as token y)."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    if rule == "mss":  # closed form: the residuals do not depend on which candidates came
        V = len(P)
        out, r, stay = [], P.copy(), np.ones(V)
        for _ in range(width):
            out.append(stay[:, None] * np.minimum(r, Q))
            stay = stay * (1.0 - np.minimum(r, Q).sum(axis=1))
            r = _residuals(r, Q)
        return out
    mats = [accepted_at(P[c], Q[c], width, rule)[0] for c in range(len(P))]
    return [np.stack([m[i] for m in mats]) for i in range(width)]


def tree_accepted(P, Q, tree, rule="mss", mats=None):
    """Expected accepted drafts of one verify pass over `tree`, for every starting context (length V).

    A node's children are its candidates, drawn from Q[c] and tested in order; the kept child y
    continues into its own subtree from context y. E(tree)[c] = sum_i M_i[c] @ (1 + E(subtree_i)).
    """
    width = max(_widths(tree)) if tree else 0
    if mats is None:
        mats = accept_matrices(P, Q, max(width, 1), rule)
    V = len(P)

    def value(node):
        e = np.zeros(V)
        for i, child in enumerate(node):
            e += mats[i] @ (1.0 + value(child))
        return e

    return value(tree)


def _widths(tree):
    yield len(tree)
    for child in tree:
        yield from _widths(child)


def positional_acceptance(P, Q, width, rule="mss", weights=None):
    """a_i = P(the i-th candidate is the one kept), averaged over contexts (default: the target's
    stationary distribution), for i = 1..width."""
    from .costs import stationary
    w = stationary(P) if weights is None else np.asarray(weights, dtype=float)
    return np.array([float(w @ m.sum(axis=1)) for m in accept_matrices(P, Q, width, rule)])


def greedy_tree(a, budget):
    """The tree of `budget` nodes that maximises sum over nodes of prod(a along its path), for
    non-increasing a (the best node left is always a child or a younger sibling of a chosen one)."""
    a = list(a)
    children = {(): []}
    heap = [(-a[0], (0,), 1.0)]       # (minus value, path of child ranks, value of its parent)
    while heap and len(children) - 1 < budget:
        negv, path, parent = heapq.heappop(heap)
        children[path[:-1]].append(path)
        children[path] = []
        heapq.heappush(heap, (negv * a[0], path + (0,), -negv))          # its first child
        if path[-1] + 1 < len(a):                                        # its next younger sibling
            heapq.heappush(heap, (-parent * a[path[-1] + 1], path[:-1] + (path[-1] + 1,), parent))

    def build(path):
        return tuple(build(c) for c in children[path])

    return build(())


def tree_speedup(tree, expected_accepted, target_cfg, draft_cfg, acc, ctx=0, batch=1, overhead=0.0):
    """Speedup of verifying `tree` over plain decoding, with 07's step times (speclab.hardware.step_time:
    the weight matmuls and attention each on its roofline, added), every sequence at `ctx` cached positions.

    A round yields 1 + E tokens (E = expected accepted drafts) and costs one draft pass per level
    (a level's nodes are drafted together: a pass over as many positions as the level has parents,
    plus `overhead` seconds, e.g. costs.DRAFT_STEP_OVERHEAD_S) and one target pass over the
    nodes + 1 positions (the last accepted token and every node).
    """
    from .hardware import step_time
    parents, depths = tree_parents(tree)
    has_children = sorted(set(parents[1:]))
    per_level = np.bincount([depths[j] for j in has_children], minlength=1)
    plain = step_time(target_cfg, acc, 1, ctx, batch)
    drafting = sum(step_time(draft_cfg, acc, int(n), ctx, batch) + overhead for n in per_level if n)
    verify = step_time(target_cfg, acc, len(parents), ctx, batch)
    return (1.0 + expected_accepted) * plain / (drafting + verify)


# --- self-drafting: a skip model that proposes the token after next -----------------------------

def skip_counts(ids, m, V, gap=1):
    """{context: counts of the token `gap` positions after the context's end}: position i's context is
    ids[i-gap-m : i-gap] (the `gap` tokens in between are not seen). gap = 0 is ngram.next_counts."""
    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids) - m - gap
    if n <= 0:
        return {}
    key = np.zeros(n, dtype=np.int64)
    for j in range(m):
        key = key * V + ids[j:j + n]
    pairs, counts = np.unique(key * V + ids[m + gap:], return_counts=True)
    ctx_keys, nxt = pairs // V, pairs % V
    contexts, row = np.unique(ctx_keys, return_inverse=True)
    table = np.zeros((len(contexts), V))
    table[row, nxt] = counts
    digits = np.zeros((len(contexts), m), dtype=np.int64)
    rest = contexts.copy()
    for j in range(m - 1, -1, -1):
        digits[:, j], rest = rest % V, rest // V
    return dict(zip(map(tuple, digits.tolist()), table))


def build_skip_tables(ids, max_order, V, gap=1):
    return [skip_counts(ids, m, V, gap) for m in range(max_order)]


def head_draft(tables, order, V, gap=1):
    """A draft for position t + 1 that reads only the context up to t - gap: the skip model of
    `order` (Witten-Bell, as 08's models) applied to context[:-gap]. With gap = 1 it drafts the
    next token without seeing the last one, as a Medusa head on the previous position would."""
    model = NGram(tables=tables, order=order, V=V)

    def draft(context):
        return model(list(context)[:len(context) - gap])
    draft.model = model
    return draft


# --- adaptive k ---------------------------------------------------------------------------------

def confident_draft(draft, context, k_max, threshold, rng):
    """Draft 1 to k_max tokens, one uniform each, stopping after a token the draft itself gave a
    probability below `threshold` (the draft is unsure, so later tokens would rarely survive).
    threshold = 0 drafts exactly k_max tokens."""
    ctx, out = list(context), []
    for _ in range(k_max):
        q = draft(ctx)
        x = int(sample_from(q, rng.random()))
        out.append(x)
        ctx.append(x)
        if q[x] < threshold:
            break
    return out


@dataclass
class AdaptiveRun:
    tokens: list = field(default_factory=list)
    rounds: list = field(default_factory=list)       # tokens emitted by each verify pass
    drafted: list = field(default_factory=list)      # tokens drafted for each pass

    @property
    def tokens_per_call(self):
        return sum(self.rounds) / len(self.rounds)

    @property
    def mean_k(self):
        return sum(self.drafted) / len(self.drafted)

    def speedup(self, c):
        """Tokens over cost: one target call per pass and c per drafted token (one draft call each)."""
        return sum(self.rounds) / (len(self.rounds) + c * sum(self.drafted))


def generate_adaptive(target, draft, context, n, k_max, threshold, rng):
    """Speculative generation of at least n tokens with k chosen per round by confident_draft.
    threshold = 0 is fixed k = k_max. Verification is textspec's exact round."""
    from .textspec import play_round
    ctx, run = list(context), AdaptiveRun()
    while len(run.tokens) < n:
        drafted = confident_draft(draft, ctx, k_max, threshold, rng)
        out, _ = play_round(target, draft, ctx, drafted, rng)
        ctx.extend(out)
        run.tokens.extend(out)
        run.rounds.append(len(out))
        run.drafted.append(len(drafted))
    return run
