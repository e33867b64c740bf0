"""What under submitted/ is no submission: every file or folder the grader does not hand to a worker ends named,
with why and where it should go (a notebook one folder too high, one the course does not know, a student folder
holding nothing, a file that is not a notebook), never skipped in silence."""
import difflib
from pathlib import Path

from .intake import Result

NOT_GRADED = "not graded"   # a Result's status for a file under submitted/ that is no submission (strays below)


def strays(root, only=None, known=None):
    """A Result (status NOT_GRADED, flagged) for every file or folder under submitted/ that submissions() does not
    hand to the grader, each with why and where it should be; known: the assignment ids (default: solutions/'s).
    Hidden files (.DS_Store, .ipynb_checkpoints) are not the students' work and are left out."""
    top = Path(root) / "submitted"
    if not top.is_dir():
        return []
    known = set(course_ids(root) if known is None else known)
    out = []

    def add(student, aid, why):
        if only is None or aid in only:
            res = Result(student, aid, status=NOT_GRADED)
            res.note(why, flag=True)
            res.why = res.notes[0]
            out.append(res)

    for entry in sorted(p for p in top.iterdir() if not p.name.startswith(".")):
        if not entry.is_dir() or entry.is_symlink():
            add("(submitted/)", entry.name, f"submitted/{entry.name} is not in a student's folder: not graded. A "
                "submission goes in submitted/<student>/<assignment>/<assignment>.ipynb")
            continue
        inside = sorted(p for p in entry.iterdir() if not p.name.startswith("."))
        if not inside:
            add(entry.name, "(empty folder)", f"submitted/{entry.name}/ holds nothing: no submission from "
                f"{entry.name} was graded. Put it in submitted/{entry.name}/<assignment>/<assignment>.ipynb, or "
                "remove the folder")
        for path in inside:
            if path.is_dir() and not path.is_symlink():
                continue  # an assignment folder: graded, or reported as unknown (grade())
            rel = f"submitted/{entry.name}/{path.name}"
            stem = path.name[:-len(".ipynb")] if path.name.endswith(".ipynb") else None
            if stem in known and not (entry / stem).exists():
                add(entry.name, stem, f"{rel} is one folder too high: not graded. Move it to "
                    f"submitted/{entry.name}/{stem}/{stem}.ipynb and grade again")
            elif stem in known:
                add(entry.name, path.name, f"{rel} lies beside the folder {stem}/, whose notebook was graded: this "
                    "copy was not. If it is the one to grade, move it into that folder")
            elif stem is not None:
                guess = difflib.get_close_matches(stem, sorted(known), n=1, cutoff=0.5)
                add(entry.name, path.name, f"{rel} is a notebook the course does not know (no solutions/{stem}/): "
                    f"not graded. It belongs in submitted/{entry.name}/<assignment>/<assignment>.ipynb"
                    + (f", perhaps {guess[0]}" if guess else f" (assignments: {', '.join(sorted(known))})"))
            else:
                add(entry.name, path.name, f"{rel} is not a notebook: not graded (the grader reads "
                    f"submitted/{entry.name}/<assignment>/<assignment>.ipynb; a file beside the notebook, inside "
                    "that folder, is kept and named in the notes)")
    return out


def course_ids(root):
    src = Path(root) / "solutions"
    return [d.name for d in src.iterdir() if (d / f"{d.name}.ipynb").is_file()] if src.is_dir() else []


def unknown_assignment(aid, known):
    """Why a folder submitted/<student>/<aid>/ was not graded, and the fix."""
    guess = difflib.get_close_matches(aid, sorted(known), n=1, cutoff=0.5)
    fix = f"rename the folder to {guess[0]}" if guess else f"the folder must be one of {', '.join(sorted(known))}"
    return f"there is no assignment {aid!r} in the gradebook or in solutions/: not graded ({fix}, and grade again)"
