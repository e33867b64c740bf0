"""The set-up files agree: one set of pins for pip, conda/Binder, the Makefile and CI."""
import re

from grading.course import REPO

REQUIRED = {"numpy", "matplotlib", "ipywidgets", "jupyterlab", "nbgrader", "pytest", "nbclient", "nbformat"}


def pins():
    out = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"requirements.txt: {line!r} is not pinned with =="
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
    for name, pinned in pins().items():
        assert version(name) == pinned, f"{name} {version(name)} is installed but {pinned} is pinned"


def test_ci_runs_the_readme_test_command():
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "make test" in (REPO / "README.md").read_text()
