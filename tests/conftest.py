import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # devtools/ (catalog, fixtures, benches) is never installed: import it from the checkout
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ["JUPYTER_CONFIG_PATH"] = str(REPO / "grading")

from grading.course import assignments  # noqa: E402

AIDS = assignments()


@pytest.fixture(params=AIDS)
def aid(request):
    return request.param
