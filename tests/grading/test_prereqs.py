"""grading/prereqs.py: what `make setup` (and `make test`) say is missing, with PATH holding only what a test
puts there, as a fresh machine would."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grading import prereqs

SCRIPT = Path(prereqs.__file__)


def fake_bin(folder, *names, node="v18.19.0"):
    """A folder of stand-in commands: each named one exists and exits 0 (`node --version` prints `node`)."""
    folder.mkdir(exist_ok=True)
    os.symlink(os.path.realpath(sys.executable), folder / "python3")
    for name in names:
        path = folder / name
        path.write_text(f"#!/bin/sh\necho {node}\n" if name == "node" else "#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return folder


def run(tmp_path, names, purpose="setup", env=None, node="v18.19.0"):
    tmp_path.mkdir(exist_ok=True)
    fake_bin(tmp_path / "bin", *names, node=node)
    chromium = tmp_path / "bin" / "chromium"
    full = {"PATH": str(tmp_path / "bin"), "SPECLAB_CHROMIUM": str(chromium), "HOME": str(tmp_path), **(env or {})}
    out = subprocess.run([str(tmp_path / "bin" / "python3"), str(SCRIPT), "--for", purpose], env=full,
                         capture_output=True, text=True, timeout=60)
    return out.returncode, out.stdout + out.stderr


EVERYTHING = ("apt-get", "make", "bwrap", "chromium", "node", "npm")


def test_nothing_missing_says_nothing(tmp_path):
    assert run(tmp_path / "all", EVERYTHING) == (0, "")
    assert run(tmp_path / "none", (), "test", env={"CI": "true"})[0] == 1  # the same check, with nothing there


def test_setup_names_what_is_missing_and_the_one_command_that_installs_it(tmp_path):
    rc, out = run(tmp_path, ("apt-get",))  # Debian or Ubuntu, without make, bubblewrap, Chromium or Node.js
    assert rc == 1
    lines = out.splitlines()
    assert "missing: make (every course command is a make target)" in lines
    installs = [ln.strip() for ln in lines if "apt-get install" in ln]
    assert len(installs) == 1, out           # said once
    assert installs[0].endswith("apt-get install -y make"), out  # only what set-up needs
    notes = [ln for ln in lines if ln.startswith("note: ")]
    assert [n.split()[1] for n in notes] == ["bubblewrap", "chromium", "Node.js"], out  # one line each, no failure
    assert not any(ln.startswith("missing: ") and "bubblewrap" in ln for ln in lines)


def test_optional_parts_missing_are_notes_not_failures(tmp_path):
    rc, out = run(tmp_path, ("apt-get", "make"))  # a laptop: no bubblewrap, no Chromium, no Node.js
    assert rc == 0, out
    assert len(out.splitlines()) == 3 and all(ln.startswith("note: ") for ln in out.splitlines()), out
    assert "make grade refuses" in out


def test_make_test_needs_the_browser_and_the_sandbox(tmp_path):
    rc, out = run(tmp_path, ("apt-get", "make", "node", "npm"), "test", env={"CI": "true"})
    assert rc == 1
    assert "apt-get install -y bubblewrap chromium" in out, out


def test_skipped_test_groups_need_nothing(tmp_path):
    rc, out = run(tmp_path, ("apt-get", "make", "bwrap"), "test", env={"SPECLAB_SKIP_BROWSER": "1", "CI": "false"})
    if os.geteuid() == 0:  # as root make test runs the JupyterHub test, which needs Node.js
        assert rc == 1 and "apt-get install -y nodejs npm" in out, out
    else:
        assert rc == 0, out
    assert "note: chromium not found" in out


def test_an_old_node_is_missing(tmp_path):
    rc, out = run(tmp_path, ("apt-get", "make", "bwrap", "chromium", "node", "npm"), "test", env={"CI": "true"},
                  node="v12.22.9")
    assert rc == 1 and "nodejs npm" in out, out


@pytest.mark.parametrize("kind, expected", [
    ("macos", "brew install"),
    ("windows", "WSL"),
    ("other", "your system's package manager"),
])
def test_each_platform_is_told_its_own_way(tmp_path, monkeypatch, kind, expected):
    monkeypatch.setenv("PATH", str(fake_bin(tmp_path / "bin")))  # nothing at all
    lines = []
    assert prereqs.check("setup", kind=kind, out=lines.append) >= 1
    assert expected in "\n".join(lines), lines
