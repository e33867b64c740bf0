"""Where the course's data lives: `data/` in a checkout, `speclab/data/` in an installed wheel.

The top-level `data/` folder is the one home of the tables, model configs, accelerator specs,
corpora and measurements; the wheel maps it into the package (pyproject.toml), so an installed
speclab reads the same files through importlib.resources.
"""
from importlib import resources
from pathlib import Path


def data_dir():
    shipped = resources.files("speclab") / "data"
    if shipped.is_dir():
        return Path(str(shipped))
    return Path(__file__).resolve().parents[2] / "data"


DATA = data_dir()
