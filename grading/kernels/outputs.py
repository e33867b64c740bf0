"""A cell's outputs, cut to a size a feedback page can show: as they arrive (OutputBudget, by RobustExecute) and
once the notebook ran (CapOutput). What a test cell scores from them is grading's (grade/scores.py)."""
import json

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor


# What one submission's outputs may weigh, in characters of the notebook's JSON. A course figure (matplotlib's
# inline backend, 100 dpi) is 20 to 80 kB of base64; a notebook of the course shows at most about 20 of them.
MAX_OUTPUT_CHARS = 20_000       # a text output (printed, a result, a traceback), after execution; the rest is cut
MAX_IMAGE_CHARS = 1_000_000     # one image/png or image/jpeg (base64): about 750 kB of PNG
MAX_NOTEBOOK_OUTPUT_CHARS = 4_000_000   # every output of the notebook together; past it, outputs are replaced
FIGURES = ("image/png", "image/jpeg")   # shown on the page as <img>, the only data: addresses it keeps
TRUNCATED = "output truncated by the grader"


def _size(value):
    return len(value) if isinstance(value, str) else len(json.dumps(value, default=str))


def _cut(text, limit, what="characters"):
    if len(text) <= limit or (len(text) <= limit + 200 and TRUNCATED in text[limit:]):  # cut once already
        return text
    return text[:limit] + f"\n... {TRUNCATED}: {len(text) - limit:,} of {len(text):,} {what} not shown ...\n"


def cap_output(out):
    """Cut one output, in place, to what a feedback page may show: text to MAX_OUTPUT_CHARS, an image over
    MAX_IMAGE_CHARS replaced by a line saying so, any other kind of data over MAX_OUTPUT_CHARS (and SVG, which
    can name other files) dropped. Returns the output's size once cut."""
    kind = out.get("output_type")
    if kind == "stream":
        text = out.get("text", "")
        out.text = _cut(text if isinstance(text, str) else "".join(text), MAX_OUTPUT_CHARS)
        return len(out.text)
    if kind == "error":
        out.ename = _cut(str(out.get("ename", "")), 200)
        out.evalue = _cut(str(out.get("evalue", "")), MAX_OUTPUT_CHARS)
        lines, total = [], 0
        for line in out.get("traceback", []) or []:
            line = str(line)
            if total + len(line) > MAX_OUTPUT_CHARS:
                lines.append(_cut(line, max(0, MAX_OUTPUT_CHARS - total)))
                break
            lines.append(line)
            total += len(line)
        out.traceback = lines
        return len(out.ename) + len(out.evalue) + sum(map(len, lines))
    data = out.get("data")
    if not isinstance(data, dict):
        return 0
    said = []
    for key, value in list(data.items()):
        size = _size(value)
        if key in FIGURES and isinstance(value, str):
            if size > MAX_IMAGE_CHARS:
                del data[key]
                said.append(f"[{TRUNCATED}: an {key} of {size:,} characters, over the {MAX_IMAGE_CHARS:,} it keeps]")
        elif key == "image/svg+xml" or size > MAX_OUTPUT_CHARS and not (key.startswith("text/")
                                                                          and isinstance(value, str)):
            del data[key]
            said.append(f"[{TRUNCATED}: {key} output ({size:,} characters) not shown]")
        elif isinstance(value, str):
            data[key] = _cut(value, MAX_OUTPUT_CHARS)
    if said:
        # the richest kind left is what the page shows: with an image gone, its note and not a stale repr
        for key in [k for k in data if k not in FIGURES]:
            del data[key]
        data["text/plain"] = "\n".join(said)
    if _size(out.get("metadata", {})) > 10_000:
        out.metadata = NotebookNode()
    return sum(_size(v) for v in data.values())


class OutputBudget:
    """Outputs admitted one by one (as a cell's outputs arrive, and again once it ran), each cut by cap_output,
    until the notebook's outputs reach MAX_NOTEBOOK_OUTPUT_CHARS; past that, an output is replaced by a
    placeholder of its own kind (an error is always kept, cut: it decides a test's score; a stderr stream stays a
    stderr stream, which fails a test too; a result stays a result, which is flagged in a test cell). Keeps a
    grading worker's memory bounded while a cell shows image after image, and the page too."""

    def __init__(self, limit=MAX_NOTEBOOK_OUTPUT_CHARS):
        self.limit, self.used = limit, 0
        self.placeholder = f"[{TRUNCATED}: the notebook's outputs passed the {limit:,} characters it keeps]\n"

    def admit(self, out):
        size = cap_output(out)
        if self.used + size <= self.limit or out.get("output_type") == "error":
            self.used += size
            return True
        if out.get("output_type") == "stream":
            out.text = self.placeholder
        else:
            out.data, out.metadata = NotebookNode({"text/plain": self.placeholder}), NotebookNode()
        return False


def _key(out):
    return out.get("output_type"), out.get("name"), out.get("text"), str(out.get("data"))


def _merge_streams(outputs):
    """Consecutive stream outputs of the same name as one (as a notebook shows them), cut once, to
    MAX_OUTPUT_CHARS; never holding more than twice that while merging."""
    merged, total = [], {}
    for out in outputs:
        prev = merged[-1] if merged else None
        if (prev is not None and out.get("output_type") == "stream" == prev.get("output_type")
                and out.get("name") == prev.get("name")):
            total[id(prev)] += len(out.get("text", ""))
            if len(prev.text) < 2 * MAX_OUTPUT_CHARS:
                prev.text = prev.text + out.get("text", "")[: 2 * MAX_OUTPUT_CHARS]
        else:
            merged.append(out)
            total[id(out)] = len(out.get("text", "")) if out.get("output_type") == "stream" else 0
    for out in merged:
        n = total[id(out)]
        if out.get("output_type") == "stream" and n > MAX_OUTPUT_CHARS:
            out.text = (out.text[:MAX_OUTPUT_CHARS] +
                        f"\n... {TRUNCATED}: {n - MAX_OUTPUT_CHARS:,} of {n:,} characters not shown ...\n")
    return merged


class CapOutput(NbGraderPreprocessor):
    """Every output cut to a size a feedback page can show (cap_output), and all of a notebook's outputs to
    MAX_NOTEBOOK_OUTPUT_CHARS (OutputBudget): LimitOutput counts lines only, so one 25 MB line would pass it,
    and images not at all. A cell keeps one placeholder of each kind for the outputs past the budget."""

    def preprocess(self, nb, resources):
        budget = OutputBudget()
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            kept, seen = [], set()
            for out in _merge_streams(cell.get("outputs", [])):
                if budget.admit(out) or _key(out) not in seen:
                    kept.append(out)
                    seen.add(_key(out))
            cell.outputs = kept
        return nb, resources
