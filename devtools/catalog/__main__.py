"""Print the grader's report card: per exercise, the mistakes it catches and the variants it accepts.

    python -m devtools.catalog            # every notebook
    python -m devtools.catalog 04         # one notebook

Each catalogued answer is actually run against the notebook's graded tests (in-process,
as tests/test_grader_strength.py does), so this table is a measurement, not a claim.
"""
import sys

from devtools.catalog import load, split
from devtools.mutants import run_variant


def first_line(error):
    return error.splitlines()[0][:110]


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
            accepted = [d for d, v in right.items() if not run_variant(aid, func, split(v)[0])]
            print(f"  {func}: caught {len(caught)}/{len(wrong)} mistakes, accepted {len(accepted)}/{len(right)} correct variants")
            for d in wrong:
                print(f"      {'caught ' if d in caught else 'MISSED '} {d}")
                if said[d]:
                    print(f"               student reads: {first_line(said[d][0][1])}")
            for d in right:
                print(f"      {'accepted' if d in accepted else 'REJECTED'} {d}")
            bad += len(wrong) - len(caught) + len(right) - len(accepted)
    print(f"\n{'every answer judged correctly' if not bad else f'{bad} answer(s) judged wrongly'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
