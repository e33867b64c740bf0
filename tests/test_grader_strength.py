"""The grader's strength, tested: every catalogued wrong answer is caught, every right one passes."""
import pytest

from grading import catalog
from devtools.mutants import run_variant

ENTRIES = catalog.entries()


@pytest.mark.parametrize("aid,func,kind,desc,source,message", ENTRIES,
                         ids=[f"{a}-{f}-{k}-{d}" for a, f, k, d, _, _ in ENTRIES])
def test_catalog_entry(aid, func, kind, desc, source, message):
    failures = run_variant(aid, func, source)
    if kind == "wrong":
        assert failures, f"{aid}: the wrong {func} ({desc}) passed every graded test"
        said = " | ".join(err for _, err in failures)
        assert any(err.startswith("AssertionError: ") and len(err) > 40 for _, err in failures), (
            f"{aid}: the wrong {func} ({desc}) is caught only by a crash, with no message that teaches: {said}")
        if message:
            assert message in said, f"{aid}: a student with the mistake '{desc}' should read {message!r}; reads {said}"
    else:
        assert not failures, f"{aid}: the correct {func} ({desc}) failed: {failures}"


def test_every_exercise_has_wrong_answers():
    import re

    import nbformat

    from grading.course import assignments, source_notebook
    cat = catalog.load()
    for aid in assignments():
        assert aid in cat, f"{aid} has no catalog of wrong answers in devtools/catalog/"
        nb = nbformat.read(source_notebook(aid), as_version=4)
        exercises = {name for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                     for name in re.findall(r"^def (\w+)", c.source, re.M)}
        assert exercises <= set(cat[aid]), f"{aid}: exercises missing from the catalog: {exercises - set(cat[aid])}"
        for func, kinds in cat[aid].items():
            assert kinds.get("wrong"), f"{aid}.{func} lists no wrong answers"
            assert kinds.get("right"), f"{aid}.{func} lists no correct variant"
