"""What happened when a submission ran, in words for its feedback page and the report: the files it
changed around it (tree_state, changes) and what its executed notebook shows (runtime_notes)."""
import hashlib
import json
import os
import unicodedata
from pathlib import Path

from ..cells import grade_id, is_graded, is_solution, is_test
from ..kernels.robust import gib, is_memory_error
from ..kernels.outputs import MAX_IMAGE_CHARS, MAX_NOTEBOOK_OUTPUT_CHARS, MAX_OUTPUT_CHARS, TRUNCATED

MAX_NOTE_CHARS = 600       # one note, in the feedback page, the report, grades.csv and the terminal
# characters that a terminal, a spreadsheet or a page could act on or hide: controls (escape sequences, bell,
# carriage return), format characters (bidirectional overrides, zero-width), surrogates (not text at all: a
# UTF-8 file cannot hold one), private and unassigned code points, line and paragraph separators
UNPRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def printable(text, limit=MAX_NOTE_CHARS):
    """`text` as one printable line of at most `limit` characters: whitespace controls become a space, other
    unprintable characters their Python escape (ESC shows as \\x1b), and what is past the limit is cut with
    a mark. Anything a submission says (an exception's name and message, a cell's id, a file's name) passes
    here before it reaches a terminal, a CSV file or a note."""
    text = text if isinstance(text, str) else str(text)
    head = text[: limit + 1]
    out = []
    for ch in head:
        if ch in "\t\n\r\x0b\x0c":
            out.append(" ")
        elif unicodedata.category(ch) in UNPRINTABLE:
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    line = "".join(out)
    if len(text) > limit or len(line) > limit:
        mark = f"... [cut by the grader: {len(text):,} characters]"
        line = line[: max(0, limit - len(mark))] + mark
    return line


def tree_state(top, skip):
    """{relative path: (size, sha1)} of every file under top, except those under the `skip` prefixes."""
    state = {}
    top = Path(top)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(top).as_posix()
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            try:
                h = hashlib.sha1()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                state[rel] = (path.stat().st_size, h.hexdigest())
            except OSError:
                state[rel] = None
    return state


def changes(before, after):
    out = [f"{p} deleted" for p in sorted(before) if p not in after]
    out += [f"{p} changed" for p in sorted(before) if p in after and before[p] != after[p]]
    out += [f"{p} created" for p in sorted(after) if p not in before]
    return out


def is_figure(out):
    """A display of a matplotlib figure (its PNG and its repr), which the inline backend shows after a cell."""
    data = out.get("data") or {}
    return "image/png" in data and set(data) <= {"image/png", "text/plain"}


def runtime_notes(res, autograded_nb, timeout, memory_limit=0):
    """Notes from the executed notebook: stopped cells, dead kernels, memory, errors outside tests, cut output."""
    try:
        cells = json.loads(Path(autograded_nb).read_text(encoding="utf-8"))["cells"]
    except Exception:
        return
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        name = grade_id(cell) or f"number {i + 1}"
        zero = "; it scores 0" if is_graded(cell) else ""
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                ename, evalue = out.get("ename", ""), out.get("evalue", "")
                if ename == "CellTimeoutError" and "restarted" in evalue:
                    res.note(f"cell {name} ran longer than {timeout} s and ignored the interrupt (does it catch "
                             "BaseException?): the kernel was restarted, the cells above it run again, and "
                             "grading went on" + zero)
                elif ename in ("CellTimeoutError", "KeyboardInterrupt"):
                    res.note(f"cell {name} ran longer than {timeout} s and was stopped (an endless loop?)" + zero)
                elif ename == "ProtocolError":
                    # only a kernel whose code wrote to the judge's channel (or took over its agent) gets here
                    res.note(f"cell {name}: the submission's code wrote to the grader's private channel with its "
                             f"kernel, which honest code never does ({evalue[:160]}); the cell was stopped and "
                             "scores 0", flag=True)
                elif ename == "DeadKernelError":
                    res.note(f"cell {name} crashed the Python kernel; it was restarted and grading went on")
                elif is_memory_error(ename):
                    limit = f"the grader lets a submission use {gib(memory_limit)}" if memory_limit else "no limit set"
                    res.note(f"cell {name} ran out of memory ({limit}): it was stopped with a MemoryError and grading "
                             "went on" + zero)
                elif "Read-only file system" in evalue or ename == "PermissionError":
                    res.note(f"cell {name} tried to write outside its working folder ({ename}: {evalue[:120]}); "
                             "the grader's sandbox let it write nowhere else", flag=True)
                elif (is_solution(cell) and ename != "NotImplementedError") or ename in (
                        "ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError"):
                    # an exercise cell that fails, or code that cannot even be imported or parsed;
                    # failing tests and the demo cells below a wrong answer speak for themselves
                    res.note(f"cell {name} raised {ename}: {evalue[:120]}")
            elif kind == "display_data" and is_test(cell) and is_figure(out):
                res.note(f"test cell {name} drew a figure (does the code it tests plot?); it is shown on the feedback "
                         "page and does not change the score")
            elif kind in ("execute_result", "display_data") and is_test(cell):
                res.note(f"test cell {name} showed a result ({kind}), which the course's tests never do: the "
                         "submission's code displayed something while it was tested", flag=True)
            text = "".join(out.get("text", "")) + "".join((out.get("data") or {}).get("text/plain", ""))
            if TRUNCATED not in text:
                continue
            if "outputs passed" in text:
                res.note(f"the notebook's outputs passed the {MAX_NOTEBOOK_OUTPUT_CHARS:,} characters the grader "
                         f"keeps at cell {name}: outputs past it are replaced by a line saying so")
            elif "an image/" in text:
                res.note(f"cell {name} showed an image larger than the grader keeps ({MAX_IMAGE_CHARS:,} characters "
                         "of base64): it is replaced by a line saying so")
            elif "not shown]" in text:
                res.note(f"cell {name} showed output of a kind or size the feedback page does not show")
            else:
                res.note(f"cell {name} printed more output than the grader keeps: only the first "
                         f"{MAX_OUTPUT_CHARS:,} characters of each output are shown")
