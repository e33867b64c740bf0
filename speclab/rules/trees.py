"""Token trees (notebook 09): candidates at every depth, verified in one target pass.

A tree is a nested tuple of children, tested in order; the root is the last accepted token and is
not counted. Each node's children are candidates drawn from the draft at that node's context and
verified with multi-step speculative sampling (speclab.rules.candidates), on the toy Markov tables.

    chain(k), full_tree(widths), tree_nodes, tree_depth, tree_parents, tree_mask
    accept_matrices(P, Q, width, rule)   M[i][c, y] = P(child i of a node at context c is kept as y)
    tree_accepted(P, Q, tree, rule)      expected accepted tokens per verify pass, per context
    positional_acceptance(P, Q, width)   a_i averaged over the target's stationary contexts
    greedy_tree(a, budget)               the budget nodes of largest value prod(a along the path)
    tree_speedup(tree, E, ...)           07's per-kernel step times, at a context: a draft pass per level,
                                         one verify pass
"""
import heapq

import numpy as np

from .candidates import _residuals, accepted_at


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
    from ..speed.costs import stationary
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
    """Speedup of verifying `tree` over plain decoding, with 07's step times (speclab.speed.hardware.step_time:
    the weight matmuls and attention each on its roofline, added), every sequence at `ctx` cached positions.

    A round yields 1 + E tokens (E = expected accepted drafts) and costs one draft pass per level
    (a level's nodes are drafted together: a pass over as many positions as the level has parents,
    plus `overhead` seconds, e.g. costs.DRAFT_STEP_OVERHEAD_S) and one target pass over the
    nodes + 1 positions (the last accepted token and every node).
    """
    from ..speed.hardware import step_time
    parents, depths = tree_parents(tree)
    has_children = sorted(set(parents[1:]))
    per_level = np.bincount([depths[j] for j in has_children], minlength=1)
    plain = step_time(target_cfg, acc, 1, ctx, batch)
    drafting = sum(step_time(draft_cfg, acc, int(n), ctx, batch) + overhead for n in per_level if n)
    verify = step_time(target_cfg, acc, len(parents), ctx, batch)
    return (1.0 + expected_accepted) * plain / (drafting + verify)
