"""speclab installed from its wheel works outside the repository (issue 16 §1).

The wheel is built from this checkout and installed into a fresh virtual environment in a
temporary folder; the course's third-party packages come from the project's .venv through a
path file (no download, and no editable finder: .pth files in that folder are not processed).
Then, from a folder that is not the checkout, every notebook's imports run, the data files load,
and a widget's update function redraws.
"""
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import nbformat
import pytest

from grading.course import REPO, assignments, source_notebook

pytestmark = pytest.mark.xdist_group("wheel")  # one xdist worker: the wheel is built and installed once

FIRST_IMPORTS = {aid: next(c.source for c in nbformat.read(source_notebook(aid), as_version=4).cells
                           if c.cell_type == "code" and "import" in c.source)
                 for aid in assignments()}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy: an in-tree build leaves build/lib behind, whose stale files a later wheel would ship
    src = tmp / "src"
    src.mkdir()
    for part in ("pyproject.toml", "README.md", "speclab", "grading"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, src / part)
    # the checkout's data without SmolLM2's float32 cache (538 MB, built by make setup): the package-data
    # patterns leave it out of the wheel anyway; a fake cache file below checks that they do
    shutil.copytree(REPO / "data", src / "data", ignore=shutil.ignore_patterns("smollm2-135m"))
    (src / "data" / "smollm2-135m").mkdir()
    (src / "data" / "smollm2-135m" / "token_embd.npy").write_bytes(b"not shipped")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp / "dist"), str(src)], check=True, capture_output=True)
    wheel = next((tmp / "dist").glob("speclab-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp / "venv")], check=True)
    python = tmp / "venv" / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                    str(wheel)], check=True, capture_output=True)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return python, elsewhere, wheel


def run(installed, code):
    python, elsewhere, _ = installed
    env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(elsewhere)}
    return subprocess.run([str(python), "-c", textwrap.dedent(code)], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_wheel_carries_the_data_and_no_development_tooling(installed):
    import zipfile
    names = zipfile.ZipFile(installed[2]).namelist()
    for data in ("speclab/data/tables.json", "speclab/data/accelerators.json",
                 "speclab/data/models/llama-3-70b.json", "speclab/data/corpora/prose_jargon.txt",
                 "speclab/data/corpora/code_stdlib.txt", "speclab/data/measured/h200_bf16_matmul.csv"):
        assert data in names, f"the wheel lacks {data}"
    assert "speclab/views/figures/nb07.py" in names, "the wheel lacks the notebooks' widget figures (speclab.views.figures)"
    assert "speclab/models/smollm/model.py" in names, "the wheel lacks the language model's code (speclab.models.smollm)"
    assert "speclab/data/corpora/baker.txt" in names
    assert not any("smollm2-135m" in n for n in names), "the wheel must not ship SmolLM2's float32 cache"
    shipped = {n.split("/")[0] for n in names}
    assert "devtools" not in shipped, "the wheel must not ship the answer catalog or the benches"
    assert not any("catalog" in n for n in names), "the wheel ships catalog files"


def test_speclab_runs_outside_the_repository(installed):
    out = run(installed, f"""
        import speclab, speclab.plumbing.datafiles
        assert {str(REPO)!r} not in speclab.__file__, speclab.__file__
        assert {str(REPO)!r} not in str(speclab.plumbing.datafiles.DATA), speclab.plumbing.datafiles.DATA
        from speclab import target, draft
        from speclab.speed import hardware
        from speclab.models import ngram
        from speclab.models.smollm import load_model, cache
        assert str(cache.cache_dir()).endswith("speclab/data/smollm2-135m"), cache.cache_dir()
        assert target().shape == (6, 6) and abs(target()[0].sum() - 1) < 1e-12
        assert draft("good").shape == (6, 6)
        assert hardware.load_model("llama-3-70b")
        assert len(ngram.load_corpus("code")) > 10_000
        print("ok", speclab.plumbing.datafiles.DATA)
    """)
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr[-3000:]


@pytest.mark.parametrize("aid", sorted(FIRST_IMPORTS))
def test_each_notebooks_imports_run_from_the_wheel(installed, aid):
    out = run(installed, FIRST_IMPORTS[aid])
    assert out.returncode == 0, f"{aid}'s first import cell fails with the installed wheel:\n{out.stderr[-3000:]}"


def test_a_widget_redraws_from_the_wheel(installed):
    out = run(installed, """
        import numpy as np
        from speclab import target
        from speclab.views import widgets, style
        style.use()
        P = target()
        def draw(fig, ctx):
            ax = fig.add_subplot()
            ax.bar(range(6), P[ctx], color=style.COLORS["target"])
            return float(P[ctx].max())
        w = widgets.redrawing(draw, ctx=widgets.slider(0, 0, 5, 1, "context"))
        widgets.set_value(w, "context", 3)
        assert w.result == float(P[3].max()), w.result
        assert widgets.png(widgets.new_figure((3, 2)))[:4] == b"\\x89PNG"
        print("ok")
    """)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-3000:]
