"""Self-check: grade your own working copy against the hidden tests, locally.

    make check NB=04            # one notebook (a number or the full id)
    make check                  # every notebook, with a course progress table
    speclab-check 04            # the same, from JupyterLab's terminal

Your notebook is copied, never modified. The copy is graded exactly as the
instructor's `make grade` would (nbgrader autograde, hidden tests included), and the
report shows, per graded part, the points and the one-line reason for each failure.
It never shows the hidden tests themselves.
"""
import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

from . import integrity
from .course import REPO, WORK, assignments, nbgrader, source_notebook
from .gradebook import cell_scores

STUDENT = "self"


def resolve(name):
    """'4', '04' or '04_tv_distance' -> '04_tv_distance'."""
    ids = assignments()
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


def check(aid, notebook=None, timeout=None, work=WORK):
    """Grade one notebook; returns a dict with parts, score, max and integrity findings."""
    notebook = Path(notebook or Path(work) / aid / f"{aid}.ipynb")
    if not notebook.exists():
        return {"aid": aid, "missing": True, "parts": [], "score": 0.0, "max": None, "findings": []}
    source = nbformat.read(source_notebook(aid), as_version=4)
    submission = nbformat.read(notebook, as_version=4)
    findings = integrity.scan(submission, source)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "solutions" / aid, root / "solutions" / aid)
        nbgrader("generate_assignment", aid, "--force", "--log-level=ERROR", root=root, capture=True)
        folder = root / "submitted" / STUDENT / aid
        folder.mkdir(parents=True)
        nbformat.write(integrity.sanitize(submission, findings), folder / f"{aid}.ipynb")
        extra = [f"--Execute.timeout={timeout}"] if timeout else []
        nbgrader("autograde", aid, "--student", STUDENT, "--force", "--log-level=CRITICAL", *extra,
                 root=root, check=False, capture=True)
        graded = root / "autograded" / STUDENT / aid / f"{aid}.ipynb"
        if not graded.exists():
            return {"aid": aid, "error": "the notebook could not be graded (is it a valid .ipynb?)",
                    "parts": [], "score": 0.0, "max": None, "findings": findings}
        scores = cell_scores(root, aid, STUDENT)
        done = nbformat.read(graded, as_version=4)
    parts = []
    for cell in done.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in scores and cell.metadata.nbgrader.get("grade"):
            got, out_of = scores[gid]
            parts.append((gid, got or 0.0, out_of, failure_line(cell) if (got or 0) < out_of else ""))
    return {"aid": aid, "parts": parts, "findings": findings,
            "score": sum(p[1] for p in parts), "max": sum(p[2] for p in parts)}


def report(result, out=None):
    out = out or sys.stdout
    aid = result["aid"]
    if result.get("missing"):
        print(f"{aid}: not started (no work/{aid}/{aid}.ipynb; run `make lab` to create it)", file=out)
        return
    if result.get("error"):
        print(f"{aid}: {result['error']}", file=out)
        return
    print(f"{aid}: {result['score']:g} / {result['max']:g} points", file=out)
    width = max(len(p[0]) for p in result["parts"]) if result["parts"] else 10
    for gid, got, out_of, why in result["parts"]:
        mark = "ok" if got >= out_of else why or "not yet solved"
        print(f"  {gid:<{width}}  {got:g} / {out_of:g}  {mark}", file=out)
    for f in result["findings"]:
        print(f"  integrity: {f} (this line was ignored when grading)", file=out)


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
    ap.add_argument("--work", default=str(WORK), help="your working copy's folder (default: work/)")
    args = ap.parse_args(argv)
    ids = [resolve(n) for n in args.notebooks] or assignments()
    if args.file and len(ids) != 1:
        ap.error("--file needs exactly one notebook")
    results = []
    for i, aid in enumerate(ids, 1):
        if len(ids) > 1:
            print(f"[{i}/{len(ids)}] checking {aid} ...", flush=True)
        results.append(check(aid, args.file, work=args.work))
        report(results[-1])
    if len(ids) > 1:
        progress_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
