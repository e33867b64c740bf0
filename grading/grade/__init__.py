"""`make grade`: autograde a class in parallel, write feedback, grades.csv and a report.

Layout (nbgrader's): submitted/<student>/<assignment id>/<assignment id>.ipynb.

    python -m grading.grade                      # everything in submitted/, all cores
    python -m grading.grade 01_branch_prediction # one assignment
    python -m grading.grade -j 1 --cell-timeout 10 --memory-limit 2G

How one class is graded, and why (one module per step):
1. intake: the assignments are registered in the course gradebook (gradebook.db) if they are not
   yet, and a template gradebook is made (the assignments and their cells, no students), both by
   nbgrader's own generate_assignment, in this process.
2. pool: each submission is graded in its own scratch course (a copy of the assignment's source
   folder, the submission, and a copy of the template gradebook kept outside the scratch course)
   by one of the worker processes of a pebble ProcessPool, one per core, each grading one
   submission after another; a worker is killed and replaced when a submission runs past its limit.
   nbgrader's SQLite gradebook is never written by two processes at once, and whatever a
   submission does to the files around it happens to the scratch copy, never to the course.
3. run (in the worker): intake reads the submission (stray files, unreadable notebooks, cells mended
   for nbgrader, the integrity scan), then nbgrader's autograde and generate_feedback run with two
   steps changed: execution survives interrupt-proof cells and dead kernels, and output is also
   capped by characters; the kernel runs in a sandbox (grading/kernels/sandbox.py: bubblewrap; no course
   files, no network, its own processes, limits on memory, CPU, processes and disk). The worker notes what went wrong (a cell
   stopped at the timeout, a locked cell edited, ...) and puts autograded/ and feedback/ into the
   course, with a "Grading notes" box on the feedback page.
4. merge: the parent merges each worker's scores into the course gradebook, one at a time.
5. report: autograded/grading-report.csv, grades.csv (nbgrader's export, with a plugin that adds
   the `review` column), and a summary: graded, failed to grade (with why), flagged for review.

A submission that cannot be read, that crashes the grader, or that runs past the
per-submission limit scores 0 and is flagged; the class always completes.
`make check` (grading/selfcheck.py) grades a learner's own copy through this same path.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

from ..course import REPO, load_config
from . import intake, merge, pool as pools, received, report, strays as stray
from .intake import Job, Result
from .report import REPORT, summary, write_report
from ..kernels.robust import GIB
from .notes import printable, tree_state

__all__ = ["grade", "main", "Result", "REPORT", "summary", "tree_state", "default_memory_limit", "parse_size",
           "NoSandbox"]


class NoSandbox(SystemExit):
    """The sandbox cannot start here and grading without it was not asked for (a message, no traceback)."""


def refuse_without_sandbox():
    from ..judge.box import available

    ok, why = available()
    if not ok:
        raise NoSandbox(f"make grade: cannot sandbox the students' code: {why}.\nSubmissions run as you, with your "
                        "files, processes and network. Install bubblewrap, or, only for submissions you trust, "
                        "grade without the sandbox: make grade GRADE_ARGS=--no-sandbox")


def default_memory_limit(workers):
    """Bytes of address space one kernel may use: the machine's memory shared by the workers, at most
    4 GiB (a course notebook needs about 1 GiB of address space), at least 1 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 4 * GIB * workers
    return max(GIB, min(4 * GIB, total // max(1, workers)))


def parse_size(text):
    """'4G', '512M', '2GiB', '1500000000' -> bytes; '0' or 'none' -> 0 (no limit)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text), re.I)
    if str(text).strip().lower() in ("none", "off", "0"):
        return 0
    if not m:
        raise ValueError(f"not a size: {text!r} (write e.g. 4G, 512M or none)")
    return int(float(m.group(1)) * 1024 ** "BKMGT".index((m.group(2) or "B").upper()))


def grade(root=REPO, only=None, workers=None, cell_timeout=None, submission_limit=None, memory_limit=None,
          quiet=False, export=True, on_result=None, timings=None, sandbox=True, judge=True):
    """Grade every submission in <root>/submitted/ (only the assignment ids in `only`, if given).

    memory_limit: bytes of address space a kernel may use (None: default_memory_limit; 0: none).
    sandbox: run every kernel in the sandbox (grading/kernels/sandbox.py); raises NoSandbox if it cannot start
    here. False runs the students' code as the user who grades (for submissions you trust).
    judge: run the test cells in the grading worker, outside the student's kernel (grading/judge/); False
    runs them in the kernel after the student's code, as nbgrader does (the old path, for comparison).
    on_result: called with each Result as it is merged. timings: a dict to fill with the seconds this
    process spent on each step (gradebooks, merge, report). Returns the list of Result, one per
    submission. Never raises for a student's submission.

    The workers are started by multiprocessing's fork server, so a script that calls grade() needs
    the usual `if __name__ == "__main__":` guard.
    """
    timings = {} if timings is None else timings
    clock = time.perf_counter
    root = Path(root)
    warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's harmless SAWarning

    def say(text):  # what the first seconds are spent on, before the first submission's line
        if not quiet:
            print(text, file=sys.stderr, flush=True)
    if sandbox:
        say("checking that the sandbox starts here (bubblewrap) ...")
        refuse_without_sandbox()
    pairs = intake.submissions(root, only)
    strays = stray.strays(root, only)
    if not pairs:
        if strays:
            write_records(root, strays, None, export=False)
            if not quiet:
                print(summary(strays, 0.0, 0, root), flush=True)
            return strays
        print(f"nothing to grade: put submissions in {root / 'submitted'}/<student>/<assignment>/")
        return []
    workers = max(1, workers or os.cpu_count() or 1)
    config = load_config(root)
    timeout = int(cell_timeout or config.Execute.get("timeout", 30))
    limit = submission_limit or (20 * timeout + 120)
    memory = default_memory_limit(workers) if memory_limit is None else int(memory_limit)
    results, aids = [], sorted({aid for _, aid in pairs})
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="speclab-grade-") as tmp:
        tmp = Path(tmp)
        # the workers' fork server imports nbgrader while this process builds the gradebooks
        pool = pools.Pool(min(workers, len(pairs)), config, tmp,
                          env={"PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH"))
                                                             if p)})
        try:
            template, release_dir = tmp / "template.db", tmp / "release"
            say(f"reading the gradebook and generating the student copies of {', '.join(aids)} to grade against "
                f"(nbgrader's generate_assignment; {len(pairs)} submission(s) to grade, {workers} worker(s)) ...")
            t = clock()
            unknown = intake.gradebooks(root, aids, config, template, release_dir)
            timings["gradebooks"] = clock() - t
            for student, aid in [p for p in pairs if p[1] in unknown]:  # a misspelt folder: reported, never fatal
                res = Result(student, aid)
                res.fail(stray.unknown_assignment(aid, stray.course_ids(root)), "")
                results.append(res)
            pairs = [p for p in pairs if p[1] not in unknown]
            names = {aid: intake.notebook_names(template, aid) for aid in aids if aid not in unknown}
            times, due = received.received(root, pairs), intake.duedates(template, names)
            releases = {aid: {name: str(next((p for p in (root / "notebooks" / aid / f"{name}.ipynb",
                                                          release_dir / aid / f"{name}.ipynb") if p.is_file()), ""))
                              for name in names[aid]} for aid in names}
            for n, (student, aid) in enumerate(pairs):
                pool.schedule(Job(str(root), student, aid, str(tmp / f"{n:05d}"), str(template), names[aid],
                                  releases[aid], timeout, memory, bool(sandbox), int(limit), bool(judge),
                                  received=times[(student, aid)], duedate=due.get(aid, "")), timeout=limit)
            progress = report.Progress(len(pairs), quiet=quiet)
            say("grading: a line as each submission is done")
            from nbgrader.api import Gradebook

            with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
                for res in strays:  # a student with only a misplaced file is in grades.csv, "not submitted"
                    if res.student != "(submitted/)":
                        gb.update_or_create_student(res.student)
                results += strays
                for job, outcome in pool.results():
                    t = clock()
                    res = finish(gb, root, pool, job, outcome, limit)
                    timings["merge"] = timings.get("merge", 0.0) + clock() - t
                    results.append(res)
                    for step in (progress.step, on_result):
                        try:
                            step and step(res)
                        except Exception as e:  # the terminal or a caller's hook: never the class
                            print(f"({type(e).__name__} while reporting one submission: "
                                  f"{printable(e, 200)})", file=sys.stderr, flush=True)
        except BaseException:  # Ctrl-C, or a broken gradebook: stop every worker, keep what is merged
            pool.stop()
            raise
        finally:  # whatever stopped the class run, what was graded is reported
            seconds = time.perf_counter() - start
            t = clock()
            wrote = write_records(root, results, config, export)
            timings["report"] = clock() - t
        pool.close()
    if not quiet:
        print(summary(results, seconds, workers, root, sandbox=bool(sandbox),
                      missing=report.missing(root) if wrote else None), flush=True)
    return results


def finish(gb, root, pool, job, outcome, limit):
    """The Result of one job, merged into the gradebook, whatever the worker returned; never raises."""
    try:
        if isinstance(outcome, Result):
            res = outcome
        else:  # past the limit, or the worker died: whatever it left in its scratch course
            res = Result(job.student, job.aid)
            res.fail(pool.failure(outcome, limit))
            merge.publish(root, res, job.scratch, job.notebooks)
            shutil.rmtree(job.scratch, ignore_errors=True)
        merge.record(gb, root, res)
    except Exception as e:  # a bug of the grader's on this one submission: it fails, the class goes on
        res = Result(job.student, job.aid)
        res.fail(f"the grader failed while recording it: {type(e).__name__}: {e}")
        try:
            merge.record(gb, root, res)
        except Exception:
            pass
    return res


def write_records(root, results, config, export=True):
    """autograded/grading-report.csv and grades.csv, each written whatever happened to the other; says why one
    could not be. True if both were written."""
    ok = True
    for what, write in (("autograded/grading-report.csv", lambda: write_report(root, results)),
                        ("grades.csv", (lambda: report.export(root, config)) if export else None)):
        if write is None:
            continue
        try:
            write()
        except Exception as e:  # the scores are in the gradebook; say so, do not lose the run
            ok = False
            hint = "; run `nbgrader export`" if what == "grades.csv" else ""
            print(f"could not write {what} ({type(e).__name__}: {printable(e, 300)}){hint}", flush=True)
    return ok


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m grading.grade", description=__doc__.split("\n")[0])
    p.add_argument("ids", nargs="*", help="assignment ids (default: every assignment in submitted/)")
    p.add_argument("-j", "--workers", type=int, default=None, help="parallel workers (default: all cores)")
    p.add_argument("--cell-timeout", type=int, default=None,
                   help="seconds a cell may run (default: Execute.timeout in grading/nbgrader_config.py)")
    p.add_argument("--submission-limit", type=float, default=None,
                   help="seconds one submission may take in all (default: 20 cell timeouts + 2 minutes)")
    p.add_argument("--memory-limit", type=parse_size, default=None,
                   help="memory (address space) one submission's kernel may use, e.g. 4G or 512M; none for no "
                        "limit (default: the machine's memory divided by the workers, between 1 and 4 GiB)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run the students' code without the sandbox, as you, with your files, processes and network "
                        "(only for submissions you trust; the default sandbox needs bubblewrap, Linux)")
    p.add_argument("--no-judge", action="store_true",
                   help="run the hidden tests in the student's kernel, after the student's code (the old path; "
                        "the judge, the default, runs them in the grader, where the student's code cannot reach)")
    args = p.parse_args(argv)
    if args.no_sandbox:
        print("grading WITHOUT the sandbox (--no-sandbox): the submissions' code runs as you", flush=True)
    grade(os.environ.get("SPECLAB_COURSE_ROOT") or REPO, only=args.ids or None, workers=args.workers,
          cell_timeout=args.cell_timeout, submission_limit=args.submission_limit, memory_limit=args.memory_limit,
          sandbox=not args.no_sandbox, judge=not args.no_judge)
