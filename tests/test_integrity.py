"""A solution cell that tampers with what the tests use earns nothing, and is flagged.

Each attack pairs a tampering line with a WRONG greedy_decode (it ignores its argument and
returns the context forever), so any mark it earned would be undeserved.
"""
import nbformat
import pytest

from grading import integrity
from grading.course import source_notebook
from devtools.mutants import failing_in_kernel, with_variant

AID = "01_branch_prediction"
WRONG = '''
def greedy_decode(P, ctx, n):
    return [ctx] * n, n
'''
RIGHT = '''
def greedy_decode(P, ctx, n):
    out, t = [], ctx
    for _ in range(n):
        t = int(np.argmax(P[t]))
        out.append(t)
    return out, n
'''
ATTACKS = {
    "numpy comparisons always true": "np.isclose = np.allclose = lambda *a, **k: True\n",
    "numpy array_equal always true": "import numpy\nnumpy.array_equal = lambda *a, **k: True\n",
    "builtins replaced": "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.float = lambda x: 0.0\n",
    "speclab check replaced": "import speclab.checks\nspeclab.checks.check_equal = lambda *a, **k: None\n",
    "check rebound in the notebook": "check_equal = lambda *a, **k: None\n",
    "setattr on the checks module": "import speclab.checks as sc\nsetattr(sc, 'check_equal', lambda *a, **k: None)\n",
    "numpy deleted": "del np\n",
    "numpy replaced": "np = None\n",
    "target replaced": "P = np.eye(6)\n",
    "globals() written": "globals()['check_equal'] = lambda *a, **k: None\n",
}
IMMUNE_WITHOUT_SANITIZE = {"numpy comparisons always true", "numpy array_equal always true", "builtins replaced"}


def source():
    return nbformat.read(source_notebook(AID), as_version=4)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_is_flagged_with_cell_and_line(attack):
    nb = with_variant(AID, "greedy_decode", ATTACKS[attack] + WRONG)
    findings = integrity.scan(nb, source())
    assert findings, f"the integrity scan missed: {attack}"
    assert all(f.grade_id == "greedy_decode" and f.line >= 1 for f in findings)
    assert "line" in str(findings[0]) and "greedy_decode" in str(findings[0])


def test_the_reference_import_is_flagged():
    nb = with_variant(AID, "greedy_decode", "from speclab.speculative import greedy_decode\n\n" + "def greedy_decode_unused(): pass\n" + "\ndef greedy_decode(P, ctx, n):\n    raise NotImplementedError\n")
    assert any("reference" in f.why for f in integrity.scan(nb, source()))
    nb = with_variant(AID, "greedy_decode", "import speclab.speculative as ref\n\ndef greedy_decode(P, ctx, n):\n    return ref.greedy_decode(P, ctx, n)\n")
    assert any("reference greedy_decode" in f.why for f in integrity.scan(nb, source()))


def test_honest_work_is_not_flagged():
    helper = '''
def most_likely(row):
    best = 0
    for i in range(len(row)):
        if row[i] > row[best]:
            best = i
    return best

def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n):
        t = most_likely(P[t])
        tokens.append(t)
    return tokens, n
'''
    nb = with_variant(AID, "greedy_decode", helper)
    nb.cells.append(nbformat.v4.new_code_cell("x = greedy_decode(P, 0, 5)\nprint(names(x[0]))\nimport numpy as np"))
    assert integrity.scan(nb, source()) == []
    assert integrity.scan(source(), source()) == [], "the course's own notebook is clean"


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_attack_earns_marks_once_sanitized(attack, tmp_path):
    nb = with_variant(AID, "greedy_decode", ATTACKS[attack] + WRONG)
    clean = integrity.sanitize(nb, integrity.scan(nb, source()))
    failing = failing_in_kernel(clean, source_notebook(AID).parent)
    assert "test_greedy_decode" in failing, f"{attack}: a wrong greedy_decode earned marks"


@pytest.mark.parametrize("attack", sorted(IMMUNE_WITHOUT_SANITIZE))
def test_tests_are_immune_to_cheap_attacks_even_unsanitized(attack):
    nb = with_variant(AID, "greedy_decode", ATTACKS[attack] + WRONG)
    failing = failing_in_kernel(nb, source_notebook(AID).parent)
    assert "test_greedy_decode" in failing, f"{attack}: the tests trusted a patched function"


def test_sanitizing_keeps_a_right_answer_right():
    nb = with_variant(AID, "greedy_decode", "np.isclose = lambda *a, **k: True\n" + RIGHT)
    clean = integrity.sanitize(nb, integrity.scan(nb, source()))
    assert "removed by the integrity scan" in "".join(c.source for c in clean.cells)
    assert "test_greedy_decode" not in failing_in_kernel(clean, source_notebook(AID).parent)


def test_make_grade_flags_tampering_in_grades_csv_and_awards_nothing(tmp_path):
    """`make grade` on a small class: two tampering students and an honest one."""
    import csv
    import shutil

    from grading.course import REPO
    from grading.grade import grade
    from grading.gradebook import cell_scores

    shutil.copytree(REPO / "solutions" / AID, tmp_path / "solutions" / AID)
    shutil.copytree(REPO / "notebooks" / AID, tmp_path / "notebooks" / AID)
    student_copy = nbformat.read(REPO / "notebooks" / AID / f"{AID}.ipynb", as_version=4)
    answers = {"honest": RIGHT, "isclose": ATTACKS["numpy comparisons always true"] + WRONG,
               "rebinder": ATTACKS["check rebound in the notebook"] + WRONG}
    for student, answer in answers.items():
        nb = nbformat.from_dict(student_copy)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "greedy_decode":
                cell.source = answer
        folder = tmp_path / "submitted" / student / AID
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{AID}.ipynb")

    grade(tmp_path, workers=2, quiet=True)
    for student in answers:
        got = cell_scores(tmp_path, AID, student)["test_greedy_decode"][0]
        assert got == (2 if student == "honest" else 0), f"{student} scored {got} on greedy_decode"
    with open(tmp_path / "grades.csv", newline="") as f:
        review = {row["student_id"]: row["review"] for row in csv.DictReader(f)}
    assert review["honest"] == ""
    for student in ("isclose", "rebinder"):
        assert "integrity" in review[student] and "greedy_decode" in review[student], review[student]
