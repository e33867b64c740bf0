"""The reveal: a break-it's Explain part (why, and where the mistake lives in real systems), kept out of the
student copy and handed back with the grade.

A notebook is read whole, so an Explain printed below a Diagnose would answer it. In the source notebook the
Explain's markdown cells carry the cell tag `reveal` (grading/AUTHORING.md). Then:

- release (RevealPointers, first of nbgrader's generate_assignment steps: grading/nbgrader_config.py): each run
  of consecutive `reveal` cells becomes one markdown pointer cell, tagged `reveal-pointer`, with the id of the
  run's first cell; a `reveal` tag on a code cell or an nbgrader cell stops the release with the reason;
- feedback (PlaceReveals, a generate_feedback step): the source's reveal cells take the place of their pointer,
  drawn by the feedback page as "The reveal" (grading/grade/feedback.py);
- self-check (grading/selfcheck.py): printed once the notebook's Diagnose part passes, or on request
  (`--reveal`), which is written to RECORD in the notebook's own folder; nbgrader submit carries that file
  with the submission and `make grade` notes "reveal seen before the Diagnose passed" (seen_note).
"""
import json
import re
import textwrap
import time
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from . import cells

TAG, POINTER_TAG = "reveal", "reveal-pointer"
RECORD = ".speclab-revealed.json"
MAX_RECORD_BYTES = 64_000
SEEN_EARLY = "reveal seen before the Diagnose passed"

POINTER = ("*The reveal (why this happens, and where the same mistake lives in real systems) is not in this copy: "
           "it comes with your grade, on your feedback page, and from `make check NB={nb}` once your Diagnose "
           "passes. `make check NB={nb} REVEAL=1` shows it now, and records that you asked.*")


class RevealError(ValueError):
    """A `reveal` tag where the release cannot honour it (a code cell, a graded or solution cell)."""


def tags(cell):
    return cell.get("metadata", {}).get("tags", []) or []


def is_reveal(cell):
    return TAG in tags(cell)


def reveal_runs(nb, where="the notebook"):
    """[[cell, ...], ...]: each run of consecutive `reveal` cells, in order. Raises RevealError on a `reveal` tag
    on a code cell or an nbgrader cell (graded, solution, locked: the student copy needs those)."""
    runs, last = [], None
    for i, cell in enumerate(nb.cells):
        if not is_reveal(cell):
            continue
        if cell.cell_type != "markdown" or cells.has_meta(cell):
            kind = "a code cell" if cell.cell_type == "code" else "an nbgrader cell" if cells.has_meta(cell) else \
                f"a {cell.cell_type} cell"
            raise RevealError(f"{where}, cell {i} ({cell.get('id', '?')}): the `reveal` tag is on {kind}; only plain "
                              "markdown cells (no nbgrader metadata) can be a reveal (grading/AUTHORING.md)")
        if last == i - 1:
            runs[-1].append(cell)
        else:
            runs.append([cell])
        last = i
    return runs


def number(aid):
    return (aid or "").split("_")[0] or aid


def pointer_cell(run, aid):
    cell = nbformat.v4.new_markdown_cell(POINTER.format(nb=number(aid)))
    cell.metadata["tags"] = [POINTER_TAG]
    if run[0].get("id"):
        cell["id"] = run[0]["id"]
    else:  # a notebook without cell ids (nbformat before 4.5): none, so the copy is the same at every release
        cell.pop("id", None)
    return cell


class RevealPointers(NbGraderPreprocessor):
    """generate_assignment's first step: every run of `reveal` cells is replaced by one pointer cell."""

    def preprocess(self, nb, resources):
        aid = resources.get("nbgrader", {}).get("assignment", "")
        runs = reveal_runs(nb, where=f"{aid} (source)")
        firsts = {id(run[0]): run for run in runs}
        out = []
        for cell in nb.cells:
            if id(cell) in firsts:
                out.append(pointer_cell(firsts[id(cell)], aid))
            elif not is_reveal(cell):
                out.append(cell)
        nb.cells = out
        return nb, resources


# ----------------------------------------------------------------------------- the feedback page

def source_notebook(config, resources):
    """The source of the notebook being given feedback, or None (CourseDirectory's root and source folder)."""
    from nbgrader.coursedir import CourseDirectory

    info = resources.get("nbgrader", {})
    course = CourseDirectory(config=config)
    path = Path(course.root) / course.source_directory / info.get("assignment", "") / f"{info.get('notebook')}.ipynb"
    return nbformat.read(path, as_version=4) if path.is_file() else None


def reveal_cell(run):
    """One markdown cell holding a run's text, tagged `reveal` (the page draws it as the reveal)."""
    cell = nbformat.v4.new_markdown_cell("\n\n".join(c.source for c in run))
    cell.metadata["tags"] = [TAG]
    return cell


def _anchor(source, run):
    """The id of the nearest cell above the run in the source that is not a reveal (where the run goes when the
    submission lost its pointer)."""
    ids = [c.get("id") for c in source.cells]
    at = ids.index(run[0].get("id")) if run[0].get("id") in ids else 0
    return next((source.cells[j].get("id") for j in range(at - 1, -1, -1) if not is_reveal(source.cells[j])), None)


def place_reveals(nb, source):
    """The submission `nb` with each of the source's reveal runs in place of its pointer (found by tag and id), or,
    pointer deleted, after the cell above it in the source (else at the end). A `reveal` tag the submission wrote
    itself is dropped: only the course's reveal is drawn as one."""
    for cell in nb.cells:
        if is_reveal(cell):
            cell.metadata["tags"] = [t for t in tags(cell) if t != TAG]
    for run in reveal_runs(source, where="the source notebook"):
        rid = run[0].get("id")
        at = next((i for i, c in enumerate(nb.cells) if POINTER_TAG in tags(c) and c.get("id") == rid), None)
        if at is not None:
            nb.cells[at] = reveal_cell(run)
            continue
        anchor = _anchor(source, run)
        at = next((i + 1 for i, c in enumerate(nb.cells) if anchor and c.get("id") == anchor), len(nb.cells))
        nb.cells.insert(at, reveal_cell(run))
    return nb


class PlaceReveals(NbGraderPreprocessor):
    """A generate_feedback step: the source's reveals on the feedback page, where their pointers sit."""

    def preprocess(self, nb, resources):
        source = source_notebook(self.config, resources)
        if source is not None:
            nb = place_reveals(nb, source)
        return nb, resources


# ----------------------------------------------------------------------------- the self-check

_DIAGNOSE = re.compile(r"\bdiagnos", re.I)


def diagnose_parts(nb):
    """The grade ids of the notebook's Diagnose part: the test cells of the solution cell that a markdown heading
    naming "Diagnose" introduces (or that carries the tag `diagnose`); failing both, of the break-it's last
    solution cell (the Diagnose is the last graded part of a break-it: course-spec section 3.1)."""
    heading, in_break_it, chosen, last = "", False, None, None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    heading = line
                    in_break_it = in_break_it or bool(re.match(r"##\s.*break it", line, re.I))
        elif cells.is_solution(cell):
            if "diagnose" in tags(cell) or (chosen is None and _DIAGNOSE.search(heading)):
                chosen = cell
            if in_break_it:
                last = cell
    target = chosen or last
    if target is None:
        return []
    parts, owner = [], None
    for cell in nb.cells:
        if cells.is_solution(cell):
            owner = cell
        elif cells.is_test(cell) and (owner is target or "diagnose" in tags(cell)):
            parts.append(cells.grade_id(cell))
    return parts


def reveal_text(nb):
    """The reveal of a notebook as markdown, one run after another ('' when it has none)."""
    return "\n\n".join("\n\n".join(c.source for c in run) for run in reveal_runs(nb))


_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_ITEM = re.compile(r"^(\s*)([*+-]|\d+[.)])\s+")


def _plain(text):
    """Inline markdown as plain text: emphasis and heading marks dropped, links as 'text (address)', maths kept."""
    kept = []
    text = _MATH.sub(lambda m: kept.append(m.group(0)) or f"\x00{len(kept) - 1}\x00", text)
    text = re.sub(r"!?\[([^\]]*)\]\(([^)\s]*)[^)]*\)", lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(2)
                  and not m.group(2).startswith("#") else m.group(1), text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])[*_](?![\s*_])(.+?)(?<![\s*])[*_](?![\w*])", r"\1", text)
    text = re.sub(r"<[^>\n]+>", "", text)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text)


def as_terminal_text(markdown, width=88):
    """Markdown as a terminal shows it: plain text, paragraphs and list items wrapped to `width`, code blocks as
    written, maths left as TeX."""
    out, para, fence = [], [], False

    def flush():
        if para:
            first = para[0]
            m = _ITEM.match(first)
            indent = " " * (len(m.group(0)) if m else 0)
            text = _plain(" ".join(ln.strip() for ln in para))
            if text.startswith(("$$", "\\[")):  # display maths: a line of its own, as written
                out.append(text)
            else:  # a formula is never broken across lines
                text = _MATH.sub(lambda m: m.group(0).replace(" ", "\x01"), text)
                out.append(textwrap.fill(text, width=width, subsequent_indent=indent, break_on_hyphens=False,
                                         break_long_words=False).replace("\x01", " "))
            para.clear()

    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            flush()
            fence = not fence
            continue
        if fence:
            out.append("    " + line)
        elif not line.strip():
            flush()
            out.append("")
        elif line.startswith("#"):
            flush()
            out.append(_plain(line.lstrip("#").strip()).upper() if line.startswith("# ") else
                       _plain(line.lstrip("#").strip()))
        elif _ITEM.match(line):
            flush()
            para.append(line)
        else:
            para.append(line)
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def record(folder, diagnose_passed, when=None):
    """Append one asked-for reveal to RECORD in `folder` (the notebook's own folder): when, and whether the
    Diagnose had passed then. Returns the record's path."""
    path = Path(folder) / RECORD
    entries = _entries(path) or []
    entries.append({"revealed_at": when or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "diagnose_passed": bool(diagnose_passed)})
    path.write_text(json.dumps({"revealed": entries}, indent=1) + "\n", encoding="utf-8")
    return path


def _entries(path):
    """The record's entries; None if there is none; raises ValueError if it is not one this module wrote."""
    path = Path(path)
    if not path.is_file() or path.is_symlink():
        return None
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ValueError("too large")
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = data.get("revealed") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError("not a reveal record")
    return entries


def seen_note(folder):
    """A grading note when the submission's RECORD says its reveal was asked for before its Diagnose passed (or
    the record cannot be read); None otherwise. The file is the student's: read bounded, as untrusted."""
    try:
        entries = _entries(Path(folder) / RECORD)
    except (ValueError, OSError, UnicodeDecodeError):
        return (f"{RECORD} (the self-check's record of an asked-for reveal) could not be read: it may have been "
                "edited; ask the student whether they saw the reveal before the Diagnose passed")
    early = [e for e in entries or [] if not e.get("diagnose_passed")]
    if not early:
        return None
    when = str(early[0].get("revealed_at", "?"))[:40]
    return f"{SEEN_EARLY} (make check REVEAL=1, first at {when})"
