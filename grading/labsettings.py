"""JupyterLab's defaults for this course's environment: no "get notified about official Jupyter news?"
toast over the first notebook, no update check.

`--LabApp.news_url=None` (make lab passes it) stops JupyterLab fetching the news, but JupyterLab 4's
notification plugin still asks, in a toast, whether to fetch it, until its `fetchNews` setting is
"true" or "false"; its default is "none" (ask). Settings' defaults are changed by an overrides.json in
JupyterLab's application settings folder (<sys.prefix>/share/jupyter/lab/settings/ for the
environment's own JupyterLab), which every JupyterLab started from this environment reads: make lab,
make formgrader, the browser tests. A learner can still turn the news on in Settings.
`make setup`, `make lab` and `make formgrader` write it (other keys already there are kept).
"""
import json
import sys
from pathlib import Path

PLUGIN = "@jupyterlab/apputils-extension:notification"
OVERRIDES = {PLUGIN: {"fetchNews": "false", "checkForUpdates": False}}


def settings_dir():
    """JupyterLab's application settings folder for this environment (its app dir's settings/)."""
    try:
        from jupyterlab.commands import get_app_dir
        return Path(get_app_dir()) / "settings"
    except ImportError:  # JupyterLab not installed yet: where it will look
        return Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings"


def write_overrides(folder=None):
    """Merge OVERRIDES into <folder>/overrides.json; returns its path."""
    path = Path(folder or settings_dir()) / "overrides.json"
    try:
        current = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        current = {}
    merged = dict(current)
    for plugin, values in OVERRIDES.items():
        merged[plugin] = {**current.get(plugin, {}), **values}
    if merged != current:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    write_overrides()
