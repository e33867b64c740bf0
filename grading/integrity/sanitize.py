"""Sanitising: a copy of the notebook with every flagged statement replaced by `pass`, so a tampering
submission is graded on its own merits (whatever the tampering hid shows up as a failed test, and a
delegated exercise loses its points)."""
import ast
import copy

from .syntax import _cell_magic, _parse

def sanitize(submission_nb, findings):
    """A copy of the notebook with every flagged statement replaced by `pass`."""
    nb = copy.deepcopy(submission_nb)
    by_cell = {}
    for f in findings:
        by_cell.setdefault(f.cell, set()).add(f.line)
    for i, lines in by_cell.items():
        cell = nb.cells[i]
        if _cell_magic(cell.source):  # IPython runs the whole cell as one statement
            cell.source = "pass  # removed by the integrity scan (the cell starts with a cell magic)"
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        src = cell.source.splitlines()
        done = []
        for node in ast.walk(tree):  # outer statements before the statements inside them
            if not isinstance(node, ast.stmt) or node.lineno not in lines:
                continue
            if any(start <= node.lineno <= end for start, end in done):
                continue  # already removed with the statement around it
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            end = node.end_lineno or node.lineno
            first = src[start - 1]
            src[start - 1] = first[: len(first) - len(first.lstrip())] + "pass  # removed by the integrity scan"
            for j in range(start, end):
                src[j] = ""
            done.append((start, end))
        cell.source = "\n".join(src)
    return nb
