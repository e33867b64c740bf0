"""Print the grader's report card: per exercise, the mistakes it catches, the variants it accepts,
and the delegations (the work handed to a course helper) that the integrity scan flags and that
lose their marks once the flagged lines are removed.

    python -m devtools.catalog            # every notebook
    python -m devtools.catalog 04         # one notebook

Each catalogued answer is actually run against the notebook's graded tests (in-process,
as tests/grading/test_grader_strength.py does), so this table is a measurement, not a claim. A
delegation counts as caught when it passes as written, the scan flags it, and the sanitized
answer fails a graded test.
"""
import sys

from devtools.catalog import load, split
from devtools.mutants import run_sanitized, run_variant


def first_line(error):
    return error.splitlines()[0][:110]


def delegation(aid, func, source):
    """('flagged', what the review reads) if the delegation is flagged and loses marks; else a verdict and why."""
    if run_variant(aid, func, source):
        return "IDLE", "fails a graded test even as written: it shows no hole"
    findings, failures = run_sanitized(aid, func, source)
    ours = [f for f in findings if f.kind == "delegate"]
    if not ours:
        return "MISSED", "the integrity scan does not flag it: full marks"
    if not failures:
        return "KEPT", f"flagged but keeps its marks once sanitized: {first_line(ours[0].why)}"
    return "flagged", f"review reads: {ours[0].why[:170]}; loses {', '.join(g for g, _ in failures)}"


def main(only):
    bad = 0
    for aid, catalog in sorted(load().items()):
        if only and not any(aid.startswith(o.zfill(2)) or aid == o for o in only):
            continue
        print(f"\n{aid}")
        for func, kinds in catalog.items():
            wrong, right = kinds.get("wrong", {}), kinds.get("right", {})
            said = {d: run_variant(aid, func, split(v)[0]) for d, v in wrong.items()}
            caught = [d for d in wrong if said[d]]
            flagged_right = {d: run_sanitized(aid, func, split(v)[0])[0] for d, v in right.items()}
            accepted = [d for d, v in right.items() if not run_variant(aid, func, split(v)[0]) and not flagged_right[d]]
            delegate = kinds.get("delegate", {})
            handed = {d: delegation(aid, func, split(v)[0]) for d, v in delegate.items()}
            flagged = [d for d in delegate if handed[d][0] == "flagged"]
            print(f"  {func}: caught {len(caught)}/{len(wrong)} mistakes, accepted {len(accepted)}/{len(right)} "
                  f"correct variants, delegation flagged {len(flagged)}/{len(delegate)}"
                  + ("" if delegate else "  (NO DELEGATION ENTRY)"))
            for d in wrong:
                print(f"      {'caught ' if d in caught else 'MISSED '} {d}")
                if said[d]:
                    print(f"               student reads: {first_line(said[d][0][1])}")
            for d in right:
                print(f"      {'accepted' if d in accepted else 'REJECTED'} {d}")
                if flagged_right[d]:
                    print(f"               flagged by the integrity scan: {flagged_right[d][0].why[:150]}")
            for d in delegate:
                verdict, note = handed[d]
                print(f"      {verdict:<8} {d}")
                print(f"               {note}")
            bad += len(wrong) - len(caught) + len(right) - len(accepted) + len(delegate) - len(flagged) + (not delegate)
    print(f"\n{'every answer judged correctly' if not bad else f'{bad} answer(s) judged wrongly'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
