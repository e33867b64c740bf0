"""speclab.speed.roofline: timing W @ X on this CPU, the roofline read off the times, the shipped GPU table."""
import importlib

import numpy as np

from speclab.speed import roofline as rl


def test_time_matmul_interleaves_sweeps_with_fixed_threads():
    seen = []
    m = rl.time_matmul(rows=256, cols=256, columns=(1, 4), sweeps=3, progress=lambda *a: seen.append(a))
    assert [s[:2] for s in seen] == [(1, 3), (2, 3), (3, 3)] and all(len(s[2]) == 2 for s in seen)
    assert m["samples"].shape == (3, 2) and np.all(m["samples"] > 0)
    assert np.array_equal(m["seconds"], m["samples"].min(axis=0))        # rates from the fastest sample
    assert np.all(m["spread"] >= 1.0)
    assert m["weight_bytes"] == 256 * 256 * 4 and list(m["flops"]) == [2 * 256 * 256, 8 * 256 * 256]
    assert m["threads"] == 1                                             # threadpoolctl is installed (requirements.txt)
    assert rl.blas_library() != "unknown"


def test_fit_roofline_bandwidth_from_the_best_narrow_product_and_the_ridge_wording():
    m = {"columns": np.array([1, 2, 4, 8]), "seconds": np.array([4.0, 2.0, 2.0, 2.0]),
         "weight_bytes": 100.0, "flops": np.array([10.0, 20.0, 40.0, 80.0])}
    fit = rl.fit_roofline(m)
    assert fit["bandwidth"] == 50.0                    # the 2-column product beat the 1-column one
    assert fit["peak"] == 40.0 and fit["ridge"] == 0.8
    assert not fit["bent"] and "ridge above 0.8" in rl.roofline_summary(fit)   # rate still doubling at the end
    bent = rl.fit_roofline(dict(m, seconds=np.array([4.0, 2.0, 2.0, 3.9])))
    assert bent["bent"] and "ridge near" in rl.roofline_summary(bent)
    wide = rl.fit_roofline(dict(m, columns=np.array([1, 2, 4, 64]), seconds=np.array([9.0, 9.0, 9.0, 1.0])))
    assert wide["bandwidth"] == 100.0 / 9.0            # only 1-4 columns count as memory-bound
    swept = rl.fit_roofline(dict(m, samples=np.array([[4.0, 2.0, 2.0, 2.0], [8.0, 4.0, 4.0, 2.0]])))
    assert swept["bandwidth_range"] == (25.0, 50.0) and "sweep by sweep" in rl.roofline_summary(swept)


def test_shipped_gpu_measurement_parses_and_names_its_device(tmp_path):
    notes, g = rl.load_measured(rl.DATA / "measured" / "h200_bf16_matmul.csv")
    assert any("H200" in n for n in notes) and any("measured 20" in n for n in notes)
    assert list(g["n_tokens"][:7]) == [1, 2, 4, 8, 16, 32, 64]
    assert np.all(g["median_s"] > 0)
    assert rl.load_measured(tmp_path / "absent.csv") is None


def test_gpu_script_imports_without_torch():
    mod = importlib.import_module("devtools.gpu_matmul_check")
    assert mod.COLUMNS[:7] == [1, 2, 4, 8, 16, 32, 64] and mod.D == 8192
