"""The grader's strength, tested: every catalogued wrong answer is caught, every right one passes
(and is not flagged by the integrity scan), and every delegating answer (the work handed to a
course helper) is flagged and loses its marks."""
import pytest

from devtools import catalog
from devtools.mutants import run_sanitized, run_variant
from grading import integrity

ENTRIES = catalog.entries()


def by_notebook(entries):
    """The entries as params, each notebook's in one xdist group: the worker that runs them executes that
    notebook's source once (devtools.mutants._executed), not once per worker."""
    return [pytest.param(*e, id=f"{e[0]}-{e[1]}-{e[2]}-{e[3]}", marks=pytest.mark.xdist_group(f"catalog-{e[0]}"))
            for e in entries]


JUDGED = by_notebook([e for e in ENTRIES if e[2] in ("wrong", "right")])
DELEGATES = by_notebook([e for e in ENTRIES if e[2] == "delegate"])


@pytest.mark.parametrize("aid,func,kind,desc,source,message", JUDGED)
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
        findings, _ = run_sanitized(aid, func, source)  # graded as make grade does, it keeps every mark
        assert not findings, (f"{aid}: the correct {func} ({desc}) is flagged by the integrity scan, so it would "
                              f"lose marks: {'; '.join(map(str, findings))}")


def says_what_happened(finding):
    """A delegation finding names the helper (or the route that hides it) and the exercise's rule."""
    return finding.kind == "delegate" and (finding.why.startswith(integrity.DELEGATES)
                                           or "hides which helper" in finding.why or "reference" in finding.why)


@pytest.mark.parametrize("aid,func,kind,desc,source,message", DELEGATES)
def test_delegation_entry(aid, func, kind, desc, source, message):
    plain = run_variant(aid, func, source)
    assert not plain, (f"{aid}: the delegating {func} ({desc}) fails a graded test even as written, so it "
                       f"shows no hole the scan must close; make it a real delegation: {plain}")
    findings, failures = run_sanitized(aid, func, source)
    said = " | ".join(str(f) for f in findings)
    assert any(says_what_happened(f) for f in findings), (
        f"{aid}: the integrity scan does not flag the delegating {func} ({desc}): {said or 'no finding'}")
    assert failures, f"{aid}: the delegating {func} ({desc}) kept every mark once the scan removed: {said}"
    if message:
        assert message in said, f"{aid}: the finding for '{desc}' should say {message!r}; says {said}"


def test_every_exercise_has_wrong_answers():
    import re

    import nbformat

    from grading.cells import solution_cells
    from grading.course import assignments, source_notebook
    cat = catalog.load()
    for aid in assignments():
        assert aid in cat, f"{aid} has no catalog of wrong answers in devtools/catalog/"
        nb = nbformat.read(source_notebook(aid), as_version=4)
        exercises = {name for c in solution_cells(nb).values() for name in re.findall(r"^def (\w+)", c.source, re.M)}
        assert exercises <= set(cat[aid]), f"{aid}: exercises missing from the catalog: {exercises - set(cat[aid])}"
        for func, kinds in cat[aid].items():
            assert kinds.get("wrong"), f"{aid}.{func} lists no wrong answers"
            assert kinds.get("right"), f"{aid}.{func} lists no correct variant"


@pytest.mark.parametrize("aid", sorted(catalog.load()))
def test_every_exercise_has_a_delegation(aid):
    missing = [func for func, kinds in catalog.load()[aid].items() if not kinds.get("delegate")]
    assert not missing, (f"{aid}: exercises with no 'delegate' entry (an answer that hands the work to a course "
                         f"helper, which must lose its marks): {', '.join(missing)}")


def test_a_variant_meets_the_tests_that_read_its_name_not_those_that_lend_a_stand_in():
    """A variant is run against the test cells that read its function, and only those: 06's Diagnose names
    five exercises in strings (it refuses them) and 07's best_gain test lends the course's step_time by
    keyword, so no variant of those can change what the cells find; a cell that calls the function by
    name is always among them."""
    import nbformat

    from devtools.mutants import tests_naming
    from grading.cells import grade_id
    from grading.course import source_notebook

    def ids(aid, func):
        return {grade_id(c) for c in tests_naming(nbformat.read(source_notebook(aid), as_version=4), func)}
    assert ids("06_break_even", "seconds_per_token") == {"test_seconds_per_token"}
    assert ids("06_break_even", "size_priced_trap") == {"test_size_priced_trap"}
    assert ids("07_roofline", "step_time") == {"test_step_time"}
    assert ids("07_roofline", "best_gain") == {"test_best_gain"}
