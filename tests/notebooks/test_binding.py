"""Each exercise that speclab also holds is graded against speclab's copy, so the two cannot drift.

An exercise is written twice when a later notebook needs it: once as the solution cell a student
replaces, once in speclab (the course's reference, which later notebooks import and the hidden
tests lend with speclab.plumbing.isolate.alone). Here every such exercise's graded test cells, hidden
parts included, run with the exercise's name bound to speclab's function instead of the solution
cell (devtools.mutants.run_variant: the source notebook is executed once, in-process, and the tests
that name the function run again over a copy of its namespace). Which speclab function is an
exercise's twin is devtools.mutants.twins: the one of the same name, the rule by which the
integrity scan flags a student's import of "the course's reference".
"""
import pytest

from devtools.mutants import run_variant, twins
from grading.course import assignments

TWINS = {aid: twins(aid) for aid in assignments()}

# The exercises that exist only as a solution cell. A new speclab function of an exercise's name
# is a new twin: it must show up here (taken off this list) and then be bound by the test below.
NO_TWIN = {
    "01_branch_prediction": {"drift", "mistake_share"},
    "02_acceptance_rule": {"accept_many", "counter_shortfall"},
    "03_residual": {"resample_sample", "detection_power", "redraft_distribution"},
    "04_tv_distance": {"speculative_joint3", "three_token_tv", "worst_position"},
    "05_k_sweep": {"first_draft_kept"},
    "06_break_even": {"should_speculate", "seconds_per_token", "speedups_by_k", "size_priced_trap"},
    "07_roofline": {"advice_cost"},
    "08_real_text": {"verify_context_round", "lookup_marginal", "shortcut_tv"},
    "09_beyond_one_draft": {"multi_candidate_sample", "multi_shortcut_tv_formula"},
    "10_real_transformer": {"generate_stale", "what_the_target_read"},
}


# Where speclab's twin takes more than the exercise, how the exercise's name is bound to it (none at present:
# 05's measure, whose twin needed fast=False, is now shown in the notebook rather than set as an exercise).
BINDINGS = {}


def test_the_exercises_without_a_twin_are_the_listed_ones():
    unbound = {aid: {func for func, twin in t.items() if twin is None} for aid, t in TWINS.items()}
    assert unbound == NO_TWIN, ("the exercises with no speclab function of their name changed; update NO_TWIN "
                                "(a new twin is then bound by test_speclab_passes_the_exercise_tests)")
    twinned = {(aid, func) for aid, t in TWINS.items() for func, twin in t.items() if twin is not None}
    assert set(BINDINGS) <= twinned, f"BINDINGS names exercises with no twin: {set(BINDINGS) - twinned}"


BOUND = [pytest.param(aid, func, twin, id=f"{aid}-{func}", marks=pytest.mark.xdist_group(f"catalog-{aid}"))
         for aid, t in sorted(TWINS.items()) for func, twin in t.items() if twin is not None]


@pytest.mark.parametrize("aid,func,twin", BOUND)
def test_speclab_passes_the_exercise_tests(aid, func, twin):
    failures = run_variant(aid, func, BINDINGS.get((aid, func), f"from {twin.__module__} import {func}\n"))
    assert not failures, (f"{aid}: speclab's {twin.__module__}.{func} fails the exercise's graded tests, so the "
                          f"solution cell and speclab say different things: {failures}")
