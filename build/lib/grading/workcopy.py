"""Make the learner's working copy: work/<id>/ from notebooks/<id>/, only where none exists.

Nothing a learner typed is ever overwritten: an existing file in work/ is left alone,
and a notebook released later is added beside the ones already there.
"""
import shutil

from .course import RELEASE, WORK, assignments


def make_work_copy(release=RELEASE, work=WORK):
    added = []
    for aid in assignments():
        src_dir = release / aid
        for src in src_dir.rglob("*"):
            if src.is_dir() or ".ipynb_checkpoints" in src.parts:
                continue
            dst = work / src.relative_to(release)
            if not dst.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
                added.append(dst.relative_to(work.parent))
    return added


if __name__ == "__main__":
    added = make_work_copy()
    for path in added:
        print(f"new in your working copy: {path}")
    print(f"your working copy is {WORK} ({len(added)} new file(s); nothing existing was touched)")
