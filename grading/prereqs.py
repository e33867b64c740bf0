"""What the course needs from the system, checked before `make setup` starts its long steps.

    python3 grading/prereqs.py              # for make setup / make lab / make check (the Makefile runs it)
    python3 grading/prereqs.py --for test   # for make test: also Chromium, Node.js/npm and bubblewrap

Runs on the system's Python, before the virtual environment exists: the standard library only, and
no import of the course. It prints one line per missing thing and, once, the exact command that
installs them all on this platform; it exits 1 if something required is missing. A missing optional
part (bubblewrap on a laptop, Chromium where no tests run) is a one-line note, never a failure.
"""
import argparse
import os
import platform
import shutil
import subprocess
import sys

MIN_PYTHON = (3, 11)


class Need:
    """One thing the course needs: how to find it, why, its package on each platform, and, for a part that
    only some commands need, the one-line note printed for `make setup` when it is missing."""

    def __init__(self, name, why, found, packages, note=None, tested=lambda: True):
        self.name, self.why, self.found, self.packages, self.note = name, why, found, packages, note
        self.tested = tested  # does make test need it here (a skipped group does not)?

    def optional_for(self, purpose):
        return self.note is not None and (purpose == "setup" or not self.tested())


def _python_ok():
    return sys.version_info[:2] >= MIN_PYTHON


def _venv_ok():
    """python3 -m venv works (Debian and Ubuntu split venv and ensurepip into python3-venv)."""
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError:
        return False
    return True


def _chromium():
    named = os.environ.get("SPECLAB_CHROMIUM", "/usr/bin/chromium")
    return os.access(named, os.X_OK)


def _node_ok():
    """Node.js 18 or newer, and npm (configurable-http-proxy, for the JupyterHub test)."""
    if not (shutil.which("node") and shutil.which("npm")):
        return False
    try:
        out = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=20).stdout
        return int(out.strip().lstrip("v").split(".")[0]) >= 18
    except (OSError, ValueError, subprocess.SubprocessError):
        return False


def needs():
    py = f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]}"
    return [
        Need(f"Python {py} or newer", f"this is Python {platform.python_version()}; once installed, run "
             f"`make lab PYTHON=python{py}`", _python_ok, {"debian": f"python{py} python{py}-venv", "macos": f"python@{py}"}),
        Need("python3-venv", "make setup builds .venv/ with `python3 -m venv`", _venv_ok,
             {"debian": "python3-venv", "macos": None}),
        Need("make", "every course command is a make target", lambda: bool(shutil.which("make")),
             {"debian": "make", "macos": "make"}),
        Need("bubblewrap", "make grade runs each student's kernel in its sandbox", lambda: bool(shutil.which("bwrap")),
             {"debian": "bubblewrap", "macos": None},
             note="make grade refuses to grade until it is installed (Linux only); make check runs without it"),
        Need("chromium", "the browser tests of make test", _chromium, {"debian": "chromium", "macos": None},
             note="only make test's browser tests need it (SPECLAB_SKIP_BROWSER=1 skips them)",
             tested=lambda: os.environ.get("SPECLAB_SKIP_BROWSER") != "1"),
        Need("Node.js 18+ and npm", "the JupyterHub test of make test", _node_ok,
             {"debian": "nodejs npm", "macos": "node"}, note="only make test's JupyterHub test needs it (as root)",
             tested=lambda: os.geteuid() == 0 or os.environ.get("CI") == "true"),
    ]


def platform_name():
    """'debian' (also Ubuntu, and WSL's Ubuntu), 'macos', 'windows' or 'other'."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith(("win", "cygwin", "msys")):
        return "windows"
    if shutil.which("apt-get"):
        return "debian"
    return "other"


def install_command(kind, packages):
    if kind == "debian":
        sudo = "" if os.geteuid() == 0 else "sudo "
        return f"{sudo}apt-get update && {sudo}apt-get install -y {' '.join(packages)}"
    if kind == "macos":
        return f"brew install {' '.join(packages)}   (Homebrew: https://brew.sh)"
    return None


def check(purpose="setup", kind=None, out=print):
    """Print what is missing for `purpose` ('setup' or 'test'); return the number of required things missing."""
    kind = kind or platform_name()
    if kind == "windows":
        out("This course runs on Linux or macOS. On Windows, install WSL (`wsl --install` in PowerShell), open "
            "its Ubuntu terminal, and run `make lab` there (README: prerequisites).")
        return 1
    missing, notes, packages, unpackaged = [], [], [], []
    for need in needs():
        if need.found():
            continue
        if need.optional_for(purpose):
            notes.append(need)
            continue
        missing.append(need)
        pkg = need.packages.get(kind)
        (packages if pkg else unpackaged).append(pkg or need.name)
    for need in notes:
        out(f"note: {need.name} not found: {need.note}")
    if not missing:
        return 0
    for need in missing:
        out(f"missing: {need.name} ({need.why})")
    command = install_command(kind, packages) if packages else None
    if command:
        out(f"install {'it' if len(packages) == 1 else 'them'} with:\n    {command}")
    if unpackaged or not command:
        names = ", ".join(unpackaged or packages)
        where = {"macos": "not available on macOS: make test needs Linux (Debian or Ubuntu, or WSL on Windows)"
                 }.get(kind, "install with your system's package manager")
        out(f"{names}: {where}")
    out("then run the make command again.")
    return len(missing)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--for", dest="purpose", choices=("setup", "test"), default="setup")
    args = p.parse_args(argv)
    sys.exit(1 if check(args.purpose) else 0)


if __name__ == "__main__":
    main()
