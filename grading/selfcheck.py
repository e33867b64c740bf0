"""Self-check: grade your own working copy against the hidden tests, locally.

    make check NB=04            # one notebook (a number or the full id)
    make check                  # every notebook, with a course progress table
    make check NB=04 REVEAL=1   # and show the break-it's reveal now, even before your Diagnose passes
    speclab-check 04            # the same, from JupyterLab's terminal, in the course folder

Your notebook is copied, never modified. The copy is graded by `make grade` itself
(grading/grade/: the same intake, execution, limits and integrity scan, in a scratch
course, its kernel in the same sandbox where bubblewrap can start; elsewhere one line says
it runs without), so the score here is the score the instructor's grading gives. The report
shows, per graded part, the points and the one-line reason for each failure, and the
grading notes (a cell stopped at the timeout, a line the integrity scan ignored, ...).
It never shows the hidden tests themselves.

Once the notebook's Diagnose part passes, the check prints its break-it's reveal (why, and where the
mistake lives in real systems: grading/reveal.py). `--reveal` prints it whatever the Diagnose scored,
and writes that you asked, with the time, to .speclab-revealed.json beside your notebook; it is
handed in with your work, and your grader sees it.

The course folder is $SPECLAB_COURSE_ROOT, else the current folder or the nearest one
above it that holds solutions/ (so an installed `speclab-check` works from the course).
"""
import argparse
import os
import shutil
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import nbformat

from . import cells, reveal
from .course import NoCourse, course_root, scratch_course, source_notebook
from .course import assignments as course_assignments
from .gradebook import cell_scores

STUDENT = "self"
# make check's progress: the grader's worker appends each graded part's id to this file as its cell starts
# (part_started, named by grading/nbgrader_config.py when it is set); the self-check prints them as they come.
PROGRESS_ENV = "SPECLAB_PROGRESS"


def assignments(root=None):
    return course_assignments(root or course_root())


def resolve(name, root=None):
    """'4', '04' or '04_tv_distance' -> '04_tv_distance'."""
    ids = assignments(root)
    for aid in ids:
        if name == aid or aid.split("_")[0] == name.zfill(2):
            return aid
    raise SystemExit(f"no notebook {name!r}; choose one of: {', '.join(ids)}")


def failure_line(cell):
    """The first line of the error a graded cell raised, or '' if it passed."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out["ename"] == "NotImplementedError":
                return "not yet solved"
            first = (out.get("evalue") or "").strip().splitlines()
            return f"{out['ename']}: {first[0]}" if first else out["ename"]
    return ""


def _result(root, res):
    """The self-check's view of one graded submission: parts, score, findings, notes."""
    out = {"aid": res.aid, "findings": list(res.findings), "notes": [n for n in res.notes
                                                                      if not n.startswith("integrity: ")]}
    if res.status == "failed":
        out["error"] = res.why
    try:
        scores = cell_scores(root, res.aid, res.student)
    except Exception:  # never recorded (an assignment the course does not have)
        return {**out, "parts": [], "score": 0.0, "max": res.max_score or None}
    graded = {}
    for path in sorted((root / "autograded" / res.student / res.aid).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            gid = cells.grade_id(cell)
            if gid in scores and cells.is_graded(cell):
                graded[gid] = cell
    parts = []
    for gid, (got, out_of) in scores.items():
        cell = graded.get(gid)
        why = failure_line(cell) if cell is not None and (got or 0) < out_of else ""
        parts.append((gid, got or 0.0, out_of, why))
    order = {gid: i for i, gid in enumerate(graded)}
    parts.sort(key=lambda p: order.get(p[0], len(order)))
    return {**out, "parts": parts, "score": sum(p[1] for p in parts), "max": sum(p[2] for p in parts)}


def part_started(path, cell=None, cell_index=None, **_):
    """nbclient's on_cell_start hook (with the path bound: the config that names it travels to make grade's
    workers), in the grader's worker, never in the student's kernel: a graded cell's id, appended to path."""
    if cell is not None and cells.is_graded(cell) and cells.grade_id(cell):
        with open(path, "a", encoding="utf-8") as f:
            f.write(cells.grade_id(cell) + "\n")


class PartProgress:
    """Prints one line per graded part as the grader reaches it: `  04_tv_distance: part 3/12 test_tv (at 14 s)`,
    the seconds since the check began.
    Reads the file part_started writes, in a thread, while `make grade` runs; stops when told."""

    def __init__(self, path, parts, out=None, every=0.3):
        self.path, self.out, self.every = Path(path), out or sys.stderr, every
        self.owner = {gid: (aid, i + 1, len(ids)) for aid, ids in parts.items() for i, gid in enumerate(ids)}
        self.start, self.seen = time.perf_counter(), 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.path.touch()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._show()

    def _run(self):
        while not self._stop.wait(self.every):
            self._show()

    def _show(self):
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for gid in lines[self.seen:]:
            aid, i, n = self.owner.get(gid, ("", 0, 0))
            where = f"{aid}: part {i}/{n}" if aid else "part"
            print(f"  {where} {gid} (at {time.perf_counter() - self.start:.0f} s)", file=self.out, flush=True)
        self.seen = len(lines)


def graded_parts(root, aid):
    """The ids of aid's graded cells, in order, from its student copy (or its source)."""
    for path in (Path(root) / "notebooks" / aid / f"{aid}.ipynb", Path(root) / "solutions" / aid / f"{aid}.ipynb"):
        if path.is_file():
            return [cells.grade_id(c) for c in nbformat.read(path, as_version=4).cells if cells.is_graded(c)]
    return []


def sandbox_or_say(out=None):
    """True if the sandbox can start here; else one line saying the check runs without it, and False."""
    from .judge.box import available

    ok, why = available()
    if not ok:
        print(f"note: your notebook runs without the grader's sandbox here ({why})", file=out or sys.stderr)
    return ok


def check_many(items, timeout=None, root=None, workers=None, memory_limit=None, progress=None, sandbox=None):
    """Grade [(aid, notebook path)] through `make grade`'s path, in one scratch course; returns one result
    dict per item, in order (missing notebooks: {"missing": True}). progress(done, total, aid) is called
    as each is graded. sandbox: as make grade's (None: where it can start; your own work may run without).
    """
    from .grade import grade

    root = Path(root or course_root())
    results = [None] * len(items)
    with tempfile.TemporaryDirectory(prefix="speclab-check-") as tmp:
        scratch = Path(tmp)
        students = {}
        for i, (aid, notebook) in enumerate(items):
            if not Path(notebook).is_file():
                results[i] = {"aid": aid, "missing": True, "parts": [], "score": 0.0, "max": None, "findings": [],
                              "notes": []}
                continue
            if not (scratch / "solutions" / aid).exists():
                scratch_course(scratch, [aid], root=root, release="copy")
            student = STUDENT if sum(a == aid for a, _ in items) == 1 else f"{STUDENT}{i:03d}"
            folder = scratch / "submitted" / student / aid
            folder.mkdir(parents=True)
            shutil.copyfile(notebook, folder / f"{aid}.ipynb")  # your file, under the name the grader expects
            students[(student, aid)] = i
        if students:
            done = []

            def step(res):
                done.append(res)
                if progress:
                    progress(len(done), len(students), res.aid)

            if sandbox is None:
                sandbox = sandbox_or_say()
            parts = {aid: graded_parts(root, aid) for _, aid in students}
            print(f"grading {', '.join(sorted(parts))}: each notebook runs top to bottom in a fresh kernel "
                  f"(seconds to a minute each); a line as each of its {sum(map(len, parts.values()))} graded "
                  "part(s) starts", file=sys.stderr, flush=True)
            old = os.environ.get(PROGRESS_ENV)
            os.environ[PROGRESS_ENV] = str(scratch / "progress.txt")
            try:
                with PartProgress(scratch / "progress.txt", parts):
                    graded = grade(scratch, workers=workers or min(len(students), os.cpu_count() or 1),
                                   cell_timeout=timeout, memory_limit=memory_limit, quiet=True, export=False,
                                   on_result=step, sandbox=sandbox)
            finally:
                if old is None:
                    os.environ.pop(PROGRESS_ENV, None)
                else:
                    os.environ[PROGRESS_ENV] = old
            for res in graded:
                results[students[(res.student, res.aid)]] = _result(scratch, res)
    return results


def check(aid, notebook=None, timeout=None, work=None, root=None):
    """Grade one notebook; returns a dict with parts, score, max, integrity findings and notes."""
    root = Path(root or course_root())
    notebook = Path(notebook or Path(work or root / "work") / aid / f"{aid}.ipynb")
    return check_many([(aid, notebook)], timeout=timeout, root=root)[0]


def report(result, out=None):
    out = out or sys.stdout
    aid = result["aid"]
    if result.get("missing"):
        print(f"{aid}: not started (no work/{aid}/{aid}.ipynb; run `make lab` to create it)", file=out)
        return
    if result.get("error"):
        print(f"{aid}: could not be graded: {result['error']}", file=out)
        return
    print(f"{aid}: {result['score']:g} / {result['max']:g} points", file=out)
    width = max(len(p[0]) for p in result["parts"]) if result["parts"] else 10
    for gid, got, out_of, why in result["parts"]:
        mark = "ok" if got >= out_of else why or "not yet solved"
        print(f"  {gid:<{width}}  {got:g} / {out_of:g}  {mark}", file=out)
    for f in result["findings"]:
        print(f"  integrity: {f} (this line was ignored when grading)", file=out)
    for note in result.get("notes", []):
        print(f"  note: {note}", file=out)


def diagnose_passed(result, parts):
    """Did every graded test of the Diagnose part (grade ids `parts`) get its points?"""
    got = {gid: (score, out_of) for gid, score, out_of, _ in result.get("parts", [])}
    return bool(parts) and all(gid in got and got[gid][0] >= got[gid][1] for gid in parts)


def show_reveal(root, result, asked=False, folder=None, out=None, one=True):
    """The break-it's reveal, as terminal text, once the Diagnose part passes, or when asked (then recorded in
    `folder`, the notebook's own); otherwise one line saying how to get it (`one`: the only notebook checked)."""
    out, aid = out or sys.stdout, result["aid"]
    path = source_notebook(aid, root)
    source = nbformat.read(path, as_version=4) if path.is_file() else None
    text = reveal.reveal_text(source) if source is not None else ""
    if not text:
        if asked:
            print(f"  {aid} has no reveal to show", file=out)
        return
    parts = reveal.diagnose_parts(source)
    passed = diagnose_passed(result, parts)
    number = reveal.number(aid)
    if not (passed or asked):
        print(f"  the reveal: once your Diagnose ({', '.join(parts)}) passes; now, recorded: "
              f"make check NB={number} REVEAL=1", file=out)
        return
    if not (one or asked):
        print(f"  your Diagnose passes: make check NB={number} shows the reveal", file=out)
        return
    said = ""
    if asked and folder is not None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        reveal.record(folder, passed)
        said = "" if passed else (f" (before your Diagnose passed: recorded in {Path(folder).name}/{reveal.RECORD}, "
                                  "which your grader sees)")
    width = min(88, max(40, shutil.get_terminal_size((88, 24)).columns - 4))
    print(f"\n== the reveal of {aid}{said} ==\n", file=out)
    print(textwrap.indent(reveal.as_terminal_text(text, width), "  "), file=out)


def progress_table(results, out=None):
    out = out or sys.stdout
    print("\ncourse progress", file=out)
    total = top = 0.0
    for r in results:
        if r.get("missing") or r.get("error"):
            print(f"  {r['aid']:<24} {'-':>9}  {'not started' if r.get('missing') else 'could not grade'}", file=out)
            continue
        solved = sum(1 for p in r["parts"] if p[1] >= p[2])
        total, top = total + r["score"], top + r["max"]
        bar = "#" * round(10 * r["score"] / r["max"]) if r["max"] else ""
        print(f"  {r['aid']:<24} {r['score']:>4g}/{r['max']:<4g} {bar:<10} {solved}/{len(r['parts'])} parts", file=out)
    if top:
        print(f"  {'total':<24} {total:>4g}/{top:<4g}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="speclab-check", description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", help="notebook numbers or ids (default: all)")
    ap.add_argument("--file", help="grade this .ipynb instead of your work/ copy (one notebook only)")
    ap.add_argument("--work", default=None, help="your working copy's folder (default: work/ in the course folder)")
    ap.add_argument("--reveal", action="store_true", help="show the break-it's reveal even if your Diagnose does not "
                    "pass yet (recorded beside your notebook, and seen by your grader)")
    args = ap.parse_args(argv)
    try:
        root = course_root()
    except NoCourse as e:
        print(f"speclab-check: {e}", file=sys.stderr)
        return 2
    ids = [resolve(n, root) for n in args.notebooks] or assignments(root)
    if args.file and len(ids) != 1:
        ap.error("--file needs exactly one notebook")
    work = Path(args.work or root / "work")
    items = [(aid, Path(args.file) if args.file else work / aid / f"{aid}.ipynb") for aid in ids]
    started = sum(Path(nb).is_file() for _, nb in items)
    if len(ids) > 1:
        others = len(ids) - started
        print(f"checking {started} of {len(ids)} notebooks" + (f" ({others} not started)" if others else "") + " ...",
              flush=True)
    results = check_many(items, root=root, progress=lambda done, total, aid: print(
        f"[{done}/{total}] {aid} graded", flush=True) if total > 1 else None)
    for result, (_, notebook) in zip(results, items):
        report(result)
        if not result.get("error") and (args.reveal or not result.get("missing")):
            show_reveal(root, result, asked=args.reveal, folder=Path(notebook).parent, one=len(ids) == 1)
    if len(ids) > 1:
        progress_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
