"""Merging: one submission's scores into the course gradebook (in the parent, one at a time), and its
autograded notebook and feedback page into the course, with a "Grading notes" box on the page."""
import html
import re
import shutil
from pathlib import Path

from .intake import NBGRADER_FILES, bad_timestamp


NOTES_START, NOTES_END = "<!-- grading notes -->", "<!-- /grading notes -->"
# The most a graded notebook and its page may weigh, once their outputs are capped (kernels/outputs.py: 4 MB of outputs
# at most): more is the student's own text (a cell of megabytes), kept in submitted/ and not copied again.
MAX_KEPT_BYTES = {"autograded": 12_000_000, "feedback": 8_000_000}
TOO_BIG = {"autograded": "the graded notebook {name} would weigh {size:.1f} MB, over the {limit:.0f} MB the grader keeps: "
                         "it was not kept (the scores stand; the submission itself is in submitted/)",
           "feedback": "the feedback page {name} would weigh {size:.1f} MB, over the {limit:.0f} MB the grader keeps: "
                       "this page of notes stands in for it (the scores stand)"}


def notes_html(res):
    items = "".join(f"<li>{html.escape(n)}</li>" for n in res.notes)
    return (NOTES_START + '<div class="grading-notes" style="border:2px solid #b8860b;background:#fff8dc;'
            'padding:0.6em 1em;margin:1em;font-family:sans-serif"><b>Grading notes</b><ul>' + items + "</ul></div>"
            + NOTES_END)


def write_notes(root, res):
    """Put the notes at the top of the submission's feedback pages in the course (replacing any there), or
    write a page of notes alone where nbgrader made none."""
    dest = Path(root) / "feedback" / res.student / res.aid
    dest.mkdir(parents=True, exist_ok=True)
    pages = sorted(dest.glob("*.html"))
    if not pages:
        page = dest / f"{res.aid}.html"
        why = ("This submission could not be graded automatically." if res.status == "failed"
               else "This submission was graded, but its feedback page could not be made.")
        body = f"<h1>{html.escape(res.aid)}: {res.score:g} / {res.max_score:g}</h1><p>{why}</p>"
        page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(res.aid)}</title>"
                        f"</head><body>{notes_html(res)}{body}</body></html>", encoding="utf-8")
        return
    for page in pages:
        text = page.read_text(encoding="utf-8")
        text = re.sub(re.escape(NOTES_START) + ".*?" + re.escape(NOTES_END), "", text, flags=re.S)
        if res.notes:
            m = re.search(r"<body[^>]*>", text)
            at = m.end() if m else 0
            text = text[:at] + notes_html(res) + text[at:]
        page.write_text(text, encoding="utf-8")


def publish(root, res, scratch, names=None):
    """Replace the course's autograded/ and feedback/ folders of this submission by the scratch course's,
    notes included. Only the graded notebooks (autograded/), their pages (feedback/) and nbgrader's timestamp.txt and submission_secret.txt are copied: never
    another file from the folder a kernel ran in (`names`: the assignment's notebook names; None: every
    top-level notebook or page)."""
    for kind, suffix in (("autograded", ".ipynb"), ("feedback", ".html")):
        made = Path(scratch) / "course" / kind / res.student / res.aid
        dest = Path(root) / kind / res.student / res.aid
        if dest.exists():
            shutil.rmtree(dest)
        if made.is_dir():
            dest.mkdir(parents=True)
            for path in sorted(made.glob(f"*{suffix}")):
                if path.is_file() and not path.is_symlink() and (names is None or path.stem in names):
                    if path.stat().st_size > MAX_KEPT_BYTES[kind]:
                        res.note(TOO_BIG[kind].format(name=path.name, size=path.stat().st_size / 1e6,
                                                      limit=MAX_KEPT_BYTES[kind] / 1e6), flag=True)
                        continue
                    shutil.copyfile(path, dest / path.name)
            for name in NBGRADER_FILES:  # nbgrader's (release_feedback reads them), never the kernel's
                path = made / name
                if name == "timestamp.txt":  # the student's own, by which release_feedback and fetch_feedback
                    handed = Path(root) / "submitted" / res.student / res.aid / name  # match a page to its
                    if handed.is_file() and not handed.is_symlink() and handed.stat().st_size < 1024 \
                            and not bad_timestamp(handed):  # submission; lateness was charged from the course's
                        path = handed                        # time (received.py)
                if path.is_file() and not path.is_symlink() and path.stat().st_size < 1024:
                    shutil.copyfile(path, dest / name)
    pages = any((Path(root) / "feedback" / res.student / res.aid).glob("*.html"))
    if res.status != "failed" and (res.notes or not pages):
        write_notes(root, res)  # a failed one gets its page once merged, with the assignment's points


def merge(gb, res):
    """Write one submission's scores into the course gradebook (called from one thread only)."""
    gb.update_or_create_student(res.student)
    record = res.record or {}
    kwargs = {"timestamp": record["timestamp"]} if record.get("timestamp") else {}
    sub = gb.update_or_create_submission(res.aid, res.student, **kwargs)
    for nb in sub.notebooks:
        rec = record.get("notebooks", {}).get(nb.name)
        nb.flagged = bool(res.flagged)
        if rec is None:  # could not be graded: 0, and flagged for a person to look at
            for g in nb.grades:
                g.auto_score, g.needs_manual_grade = 0, False
            continue
        nb.late_submission_penalty = rec["late_penalty"]
        for g in nb.grades:
            g.auto_score, g.needs_manual_grade = rec["grades"].get(g.name, [0, False])
        for c in nb.comments:
            c.auto_comment = rec["comments"].get(c.name)
    gb.db.commit()
    res.score, res.max_score = sub.score, sub.max_score


STAND_IN = ("The grader could not grade this notebook automatically (or could not keep what it graded): it scores 0 "
            "until a person grades it. The submission as handed in is in submitted/{student}/{aid}/. Why:\n")


def stand_in(gb, root, res):
    """The formgrader's Manual Grading lists only notebooks that have a file in autograded/: each notebook of
    the submission without one gets a stand-in that says why (a code cell's text output, shown escaped)."""
    import nbformat

    try:
        notebooks = gb.find_submission(res.aid, res.student).notebooks
    except Exception:  # never recorded
        return
    folder = Path(root) / "autograded" / res.student / res.aid
    for nb in notebooks:
        path = folder / f"{nb.name}.ipynb"
        if path.exists():
            continue
        why = STAND_IN.format(student=res.student, aid=res.aid) + "".join(f"- {n}\n" for n in res.notes)
        cell = nbformat.v4.new_code_cell("# the grader's notes on this submission",
                                         outputs=[nbformat.v4.new_output("stream", name="stdout", text=why)])
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)


def record(gb, root, res):
    """Merge one result into the gradebook; never raises. A note added here reaches the feedback page, and
    a submission that could not be graded gets a page of notes with its score, and a stand-in notebook in
    autograded/ so the formgrader's Manual Grading lists it."""
    notes = len(res.notes)
    try:
        merge(gb, res)
    except Exception as e:
        gb.db.rollback()
        res.fail(f"could not record the scores: {type(e).__name__}: {e}", "")
    try:
        stand_in(gb, root, res)
    except OSError:
        pass
    if res.status == "failed" or len(res.notes) != notes:
        try:
            write_notes(root, res)
        except OSError:
            pass
