"""Regenerate the README's screenshots: each notebook's main widget, as JupyterLab shows it.

    python -m devtools.screenshots [ID ...]      (make screenshots [NB=04])

Runs the browser test of each source notebook (tests/browser/: JupyterLab in headless Chromium,
Run All, move the main widget's slider), which saves screenshots/<id>-source.png (git-ignored),
then copies each to docs/widgets/<id>.png, the file the README shows. Exits with the tests'
status: a notebook that fails its browser test gets no new screenshot.
"""
import os
import shutil
import subprocess
import sys

from grading.course import REPO, assignments

RAW = REPO / "screenshots"
README_DIR = REPO / "docs" / "widgets"  # committed (screenshots/ at any depth is git-ignored)


def main(wanted=None):
    """Screenshots for the assignments whose ids start with one of `wanted` (all when empty)."""
    ids = [aid for aid in assignments() if not wanted or any(aid.startswith(w) for w in wanted)]
    if not ids:
        print(f"no assignment id starts with any of {wanted}")
        return 2
    env = dict(os.environ, SPECLAB_SCREENSHOTS=str(RAW))
    stale = [RAW / f"{aid}-source.png" for aid in ids]
    for path in stale:
        path.unlink(missing_ok=True)
    selection = " or ".join(f"{aid}-source" for aid in ids)
    cmd = [sys.executable, "-m", "pytest", str(REPO / "tests" / "browser" / "test_browser_notebooks.py"),
           "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-k", selection]
    rc = subprocess.run(cmd, cwd=REPO, env=env).returncode
    README_DIR.mkdir(parents=True, exist_ok=True)
    for aid, shot in zip(ids, stale):
        if shot.is_file():
            shutil.copyfile(shot, README_DIR / f"{aid}.png")
            print(f"{(README_DIR / f'{aid}.png').relative_to(REPO)}  <- {shot.relative_to(REPO)}")
        else:
            print(f"{aid}: no screenshot (its browser test failed: see above)")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
