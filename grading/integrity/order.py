"""Locked cells in the release's order.

A test cell runs where it stands. Moved above the exercises before it, a test that swaps a course
reference into the kernel (`alone(globals(), accept_prob=ref.accept_prob)`) lends it to the student's
cells below, which can keep it. So the submission's nbgrader cells (solutions, tests, locked cells: every
cell the release names) are put back in the release's order, each into one of the places those cells
held; the student's own cells stay where they are. The move is noted (and flagged by the caller).
"""
from ..cells import grade_id

MAX_NAMED = 5


def release_order(nb, release):
    """Put `nb`'s cells known to `release` back in its order, in place; a note naming the moved cells, or None."""
    rank = {}
    for c in release.cells:
        if grade_id(c):
            rank.setdefault(grade_id(c), len(rank))
    seen, slots = set(), []
    for i, c in enumerate(nb.cells):  # a duplicate id keeps its place (nbgrader's DeduplicateIds answers it)
        if grade_id(c) in rank and grade_id(c) not in seen:
            seen.add(grade_id(c))
            slots.append(i)
    cells = [nb.cells[i] for i in slots]
    ordered = sorted(cells, key=lambda c: rank[grade_id(c)])
    moved = [grade_id(a) for a, b in zip(cells, ordered) if a is not b]
    if not moved:
        return None
    for i, c in zip(slots, ordered):
        nb.cells[i] = c
    named = ", ".join(moved[:MAX_NAMED]) + (f" and {len(moved) - MAX_NAMED} more" if len(moved) > MAX_NAMED else "")
    return (f"cells {named} were not in the release's order (a test cell moved above the exercises it follows?): "
            "they were graded in the release's order")
