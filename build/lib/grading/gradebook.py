"""Read scores out of the gradebook."""
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry


def score(root, aid, student):
    """(score, max_score) of one student's submission, or None if it was never graded."""
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        try:
            sub = gb.find_submission(aid, student)
        except MissingEntry:
            return None
        return sub.score, sub.max_score


def cell_scores(root, aid, student):
    """{grade_id: (score, max_score)} for one submission's graded cells."""
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        nb = gb.find_submission(aid, student).notebooks[0]
        return {g.name: (g.score, g.max_score) for g in nb.grades}
