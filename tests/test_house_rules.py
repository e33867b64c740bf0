"""The house rules a newcomer relies on to find their way (issue 46): no module of grading/ or speclab/ passes
400 lines, and the kernel room (grading/kernels/) imports nothing from the rooms that use it (grade/ and
judge/), so the class grader and the judge depend on the room, never on each other through it.

Each rule is a function of a folder, so that its test can also show it catching a breach in a scratch tree."""
import ast
import subprocess
from pathlib import Path

from tests.conftest import REPO

MAX_LINES = 400
ROOM = "grading.kernels"
ABOVE = ("grading.grade", "grading.judge")


def python_files(root, folders=("grading", "speclab")):
    found = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *folders], cwd=root,
                           capture_output=True, text=True, check=True).stdout.split()
    return [Path(root, f) for f in found if f.endswith(".py") and "node_modules" not in f and Path(root, f).exists()]


def too_long(root):
    """{path: lines} of every module over MAX_LINES."""
    out = {}
    for path in python_files(root):
        n = len(path.read_text().splitlines())
        if n > MAX_LINES:
            out[str(path.relative_to(root))] = n
    return out


def module_name(root, path):
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(root, path):
    """The absolute names of the modules `path` imports, relative imports resolved, lazy ones (in a function) too."""
    name = module_name(root, path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            yield target
            yield from (f"{target}.{a.name}" for a in node.names)  # `from .. import grade` names a module too


def arrows_up(root):
    """(module, what it imports) for every import from the kernel room into a room above it."""
    out = []
    for path in python_files(root, ("grading/kernels",)):
        for target in imported(root, path):
            if any(target == up or target.startswith(up + ".") for up in ABOVE):
                out.append((module_name(root, path), target))
    return sorted(set(out))


def test_no_module_passes_400_lines():
    assert too_long(REPO) == {}, f"split these by idea (README: layout): {too_long(REPO)}"


def test_the_kernel_room_imports_nothing_from_grade_or_judge():
    assert arrows_up(REPO) == [], "grading/kernels/ is used by grade/ and judge/; it must not import them"


def scratch(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_rules_catch_a_breach(tmp_path):
    root = scratch(tmp_path, {
        "grading/__init__.py": "",
        "grading/kernels/__init__.py": "",
        "grading/kernels/fine.py": "from . import other\nimport numpy\n",
        "grading/kernels/lazy.py": "def f():\n    from ..grade.outputs import CapOutput\n",
        "grading/kernels/named.py": "from .. import judge\n",
        "grading/kernels/absolute.py": "import grading.judge.codec\n",
        "speclab/long.py": "x = 1\n" * (MAX_LINES + 1),
        "speclab/rules/exact.py": "x = 1\n" * MAX_LINES,
    })
    assert too_long(root) == {"speclab/long.py": MAX_LINES + 1}
    assert [m for m, _ in arrows_up(root)] == ["grading.kernels.absolute", "grading.kernels.lazy",
                                               "grading.kernels.lazy", "grading.kernels.named"]
