"""Unit tests for the shared helpers in speclab/."""
import subprocess
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from grading.course import REPO
from speclab import ScriptedRNG, blend, draft, name, names, sample_from, target, temper, token
from speclab import checks, speculative as S, style, tables, timeline, widgets


# --- tokens -----------------------------------------------------------------------

def test_token_names_round_trip():
    assert names([0, 1, 4]) == "abe" and name(5) == "f" and token("e") == 4
    with pytest.raises(ValueError):
        token("z")


# --- tables -----------------------------------------------------------------------

def test_stored_tables_are_row_stochastic():
    for t in ("target", "other2", "other3"):
        assert tables.is_model(tables.table(t), V=6)


def test_stored_tables_match_their_recipe():
    run = subprocess.run([sys.executable, str(REPO / "data" / "make_tables.py"), "--check"], capture_output=True)
    assert run.returncode == 0, "data/make_tables.py no longer reproduces data/tables.json with this NumPy"


def test_target_and_good_draft_row_a_are_the_seed_pages():
    p, q = target()[0], draft("good")[0]
    assert np.round(p, 4).tolist() == [0.0943, 0.31, 0.0908, 0.0015, 0.3821, 0.1213]
    assert np.round(q, 4).tolist() == [0.0823, 0.2638, 0.0777, 0.0013, 0.4479, 0.127]


def test_tables_are_copies():
    P = target()
    P[0, 0] = 99
    assert target()[0, 0] != 99


def test_blend_and_temper():
    P, other = target(), tables.table("other2")
    assert np.allclose(blend(P, other, 1.0), P) and np.allclose(blend(P, other, 0.0), other)
    assert np.allclose(temper(P, 1.0), P)
    assert tables.is_model(temper(P, 0.5)) and tables.is_model(temper(P, 2.0))
    flat = temper(P, 1e6)
    assert np.allclose(flat, 1 / 6, atol=1e-4), "a huge temperature flattens every row"
    assert (temper(P, 0.3).max(axis=1) > P.max(axis=1)).all(), "a low temperature sharpens every row"
    with pytest.raises(ValueError):
        blend(P, other, 1.5)
    with pytest.raises(ValueError):
        temper(P, 0)
    with pytest.raises(KeyError):
        draft("excellent")


# --- sampling ---------------------------------------------------------------------

def test_sample_from_is_inverse_cdf():
    p = [0.2, 0.0, 0.5, 0.3]
    assert [sample_from(p, u) for u in (0.0, 0.1999, 0.2, 0.69, 0.7, 0.999999)] == [0, 0, 2, 2, 3, 3]
    assert sample_from([0.5, 0.5, 0.0], 0.9999999999999999) == 1, "never returns a zero-probability token"


def inverse_cdf(p, u):
    """The definition, with NumPy's cumsum and searchsorted (sample_from's path for long rows)."""
    cdf = np.cumsum(p)
    i = int(np.searchsorted(cdf, u, side="right"))
    return i if i < len(cdf) else int(np.flatnonzero(p > 0)[-1])


def test_sample_from_takes_the_same_token_as_the_numpy_definition():
    """Both of sample_from's paths (a loop for short rows, which adds in np.cumsum's order; the array's own
    methods past it) pick the definition's token, even for a uniform that sits exactly on a step of the CDF
    or one float either side of it; rows with zeros, every size up to just past the loop's limit, and long
    rows (08's alphabet has 96 characters); lists as well as arrays."""
    from speclab.sampling import LOOP_MAX

    rng = np.random.default_rng(3)
    checked = 0
    for n in list(range(1, LOOP_MAX + 3)) + [64, 96, 200]:
        for concentration in (0.1, 1.0, 10.0):
            p = rng.dirichlet(np.full(n, concentration))
            p[rng.random(n) < 0.25] = 0.0
            if not p.any():
                p[-1] = 1.0
            steps = np.cumsum(p)[:-1]
            us = np.concatenate([rng.random(8), steps, np.nextafter(steps, 0), np.nextafter(steps, 1),
                                 [0.0, np.nextafter(1.0, 0)]])
            for u in us[(us >= 0) & (us < 1)].tolist():
                assert sample_from(p, u) == inverse_cdf(p, u) == sample_from(p.tolist(), u), (n, u, p.tolist())
                checked += 1
    assert checked > 4_000
    # a row that is not a distribution goes the general way, as before
    assert sample_from(np.array([0.5, -0.25, 0.75]), 0.3) == inverse_cdf(np.array([0.5, -0.25, 0.75]), 0.3)


def test_scripted_rng_enforces_the_contract():
    rng = ScriptedRNG([0.25, 0.5])
    assert (rng.random(), rng.random(), rng.left) == (0.25, 0.5, 0)
    with pytest.raises(RuntimeError):
        rng.random()
    with pytest.raises(AttributeError):
        ScriptedRNG([0.1]).choice(3)
    with pytest.raises(TypeError):
        ScriptedRNG([0.1]).random(size=3)
    with pytest.raises(ValueError):
        ScriptedRNG([1.0])


# --- reference implementations ----------------------------------------------------

def test_one_token_rule_on_row_a():
    p, q = target()[0], draft("good")[0]
    assert S.accept_prob(p, q, 1) == 1.0
    assert round(S.accept_prob(p, q, 4), 4) == 0.8532
    assert np.round(S.residual(p, q), 4).tolist() == [0.1673, 0.6457, 0.1838, 0.0032, 0.0, 0.0]
    assert np.allclose(S.residual(p, p), p)
    assert abs(S.acceptance_rate(p, q) - (1 - S.tv_distance(p, q))) < 1e-12


def test_speculative_sample_uses_the_contract():
    p, q = target()[0], draft("good")[0]
    # u=0.95 drafts 'f' (q's cdf passes .95 at f); p[f] < q[f], accept prob .955: u=0.99 rejects it
    rng = ScriptedRNG([0.95, 0.99, 0.5])
    assert S.speculative_sample(p, q, rng) == sample_from(S.residual(p, q), 0.5) and rng.left == 0
    rng = ScriptedRNG([0.5, 0.1])
    assert S.speculative_sample(p, q, rng) == 4 and rng.left == 0, "'e' drafted and kept: two uniforms"


def test_verify_round_rules_on_scripted_uniforms():
    P, Q = target(), draft("good")
    drafted = [4, 5, 0, 4]
    # all four accepted (u = 0 always passes), then the bonus from P[drafted[-1]]
    assert S.verify_round(P, Q, 0, drafted, ScriptedRNG([0, 0, 0, 0, 0.5])) == drafted + [sample_from(P[4], 0.5)]
    # the first test fails (u just under 1 and p/q < 1 for 'e' after 'a'): one residual token
    out = S.verify_round(P, Q, 0, drafted, ScriptedRNG([0.9999, 0.3]))
    assert out == [sample_from(S.residual(P[0], Q[0]), 0.3)]
    assert S.verify_round(P, Q, 0, drafted, ScriptedRNG([0.9999, 0.3]), "no_resample") == [sample_from(P[0], 0.3)]
    assert S.verify_round(P, Q, 0, drafted, ScriptedRNG([0.9999, 0.3]), "continue") == out + [5, 0, 4]
    with pytest.raises(ValueError):
        S.verify_round(P, Q, 0, drafted, ScriptedRNG([]), "lenient")


def test_seed_experiment_correct_rule_and_floor():
    P, Q = target(), draft("good")
    J = S.target_joint(P, 0)
    assert abs(J.sum() - 1) < 1e-12
    tv = S.tv_distance(S.speculative_joint(P, Q, 0, 4, 60000, np.random.default_rng(10)), J)
    floor = S.tv_distance(S.speculative_joint(P, P, 0, 1, 60000, np.random.default_rng(11)), J)
    assert (round(tv, 4), round(floor, 4)) == (0.0079, 0.0059)


def test_greedy_speculation_matches_plain_greedy():
    P = target()
    plain = S.greedy_decode(P, 0, 48)[0]
    for kind, calls in (("good", 10), ("middling", 17), ("poor", 48)):
        assert S.speculative_greedy(P, draft(kind), 0, 48, 4) == (plain, calls)
        assert len(S.greedy_rounds(P, draft(kind), 0, 48, 4)) == calls


def test_rounds_with_accuracy_bounds():
    rng = np.random.default_rng(0)
    assert S.rounds_with_accuracy(1.0, 4, 20, rng) == [5, 5, 5, 5]
    assert S.rounds_with_accuracy(0.0, 4, 3, rng) == [1, 1, 1]


# --- checks -----------------------------------------------------------------------

def test_checks_compare_in_plain_python():
    assert checks.close(np.array([0.1, 0.2]), [0.1, 0.2 + 1e-12])
    assert not checks.close([0.1, 0.2], [0.1])
    assert not checks.close([float("nan")], [0.0]), "NaN never passes"
    assert checks.shape(np.zeros((6, 6))) == (6, 6)
    with pytest.raises(AssertionError, match="the residual"):
        checks.check_close([1, 0], [0.5, 0.5], "the residual")
    checks.check_equal((1, 2), [1, 2], "tuples and lists of tokens compare equal")
    with pytest.raises(AssertionError):
        checks.check_equal(np.array([1, 2]), [1, 3], "tokens")


def test_checks_ignore_a_patched_numpy(monkeypatch):
    monkeypatch.setattr(np, "isclose", lambda *a, **k: True)
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    assert not checks.close([1.0], [2.0])


# --- style, widgets, timeline -----------------------------------------------------

def test_style_and_heatmap():
    style.use()
    fig, ax = plt.subplots()
    style.table_heatmap(ax, target(), "P")
    style.paired_bars(ax, [("p", target()[0], "target"), ("q", draft()[0], "draft")])
    assert len(ax.patches) > 6
    plt.close(fig)


def test_redrawing_widget_returns_what_it_drew():
    calls = []

    def draw(fig, k):
        calls.append(k)
        fig.add_subplot().plot(range(k))
        return k * 2

    w = widgets.redrawing(draw, k=widgets.slider(2, 1, 5, 1, "k"))
    assert w.result == 4
    assert widgets.set_value(w, "k", 5) == 10 and calls[-1] == 5
    with pytest.raises(KeyError):
        widgets.set_value(w, "nope", 1)
    assert plt.get_fignums() == [], "the widget closes its figures"
    calls.clear()
    assert widgets.probe(w, "k", 3) == 6 and w.children[0].value == 5 and w.result == 10, (
        "probe computes on a twin and leaves the displayed widget alone")
    assert widgets.probe(w, "k", 1) == 2 and calls == [3, 1]
    with pytest.raises(KeyError):
        widgets.probe(w, "nope", 1)


def test_timeline_schedules():
    plain = timeline.plain_schedule(48)
    spec = timeline.speculative_schedule([5, 5, 3], k=4, draft_step=0.1)
    assert timeline.finish_time(plain) == 48
    assert abs(timeline.finish_time(spec) - 3 * 1.4) < 1e-12
    fig, ax = plt.subplots()
    timeline.draw(ax, [("plain", plain), ("spec", spec)], title="t")
    plt.close(fig)


def _speed_widget():
    """A small live widget: a curve, a dot and a title move; an axis and a line stay."""
    xs = np.linspace(0, 1, 101)

    def build(fig):
        ax = fig.add_subplot()
        ax.axhline(1, color="grey")
        ax.set(xlim=(0, 1), ylim=(0, 3), xlabel="c", ylabel="speedup")
        curve, = ax.plot(xs, xs)
        dot, = ax.plot([0], [0], "o")
        return widgets.moving(curve, dot, ax.set_title(""))

    def update(parts, a, c):
        curve, dot, title = parts
        curve.set_ydata(a / (1 + xs))
        dot.set_data([c], [a / (1 + c)])
        title.set_text(f"a = {a:.1f}")
        return a / (1 + c)

    return widgets.live(build, update, a=widgets.slider(2.0, 0.5, 4.0, 0.5, "a"),
                        c=widgets.slider(0.5, 0.0, 1.0, 0.25, "c"))


def _pixels(png_bytes):
    from PIL import Image as PILImage
    import io
    return np.asarray(PILImage.open(io.BytesIO(png_bytes)).convert("RGB"), dtype=int)


def test_live_widget_updates_in_place_and_shows_the_same_pixels_as_a_full_redraw():
    w = _speed_widget()
    assert w.result == 2.0 / 1.5
    fig = w._screen.fig
    axes_before = fig.axes[0]
    assert widgets.set_value(w, "c", 1.0) == 1.0 and fig.axes[0] is axes_before, "the figure is kept, not rebuilt"
    assert widgets.set_value(w, "a", 3.0) == 1.5
    shown = _pixels(widgets.encode(w._screen.canvas))
    # the same state drawn from scratch, every artist in one full rasterisation
    for artist in fig.findobj(lambda a: a.get_animated()):
        artist.set_animated(False)
    full = _pixels(widgets.png(fig))
    assert shown.shape == full.shape
    # Moving artists are drawn last, so where one crosses the frame (a spine, a tick) it lies on
    # top of it: a few dozen pixels of 252,000. Anything else would be a stale or missing artist.
    differ = (np.abs(shown - full).max(axis=2) > 2).mean()
    assert differ < 1e-3, f"a move shows what a full redraw of the same state shows ({differ:.2%} of pixels differ)"
    assert plt.get_fignums() == [], "the widget's figure stays outside pyplot"


def test_live_widget_redraws_its_frame_when_limits_change():
    w = _speed_widget()
    ax = w._screen.fig.axes[0]
    widgets.set_value(w, "a", 2.5)
    frame = w._screen.frame
    ax.set_ylim(0, 6)   # what an update that rescales does
    widgets.set_value(w, "a", 3.0)
    assert w._screen.frame != frame and w._screen.frame[0][1] == (0, 6), "new limits, new background"


def test_live_widget_probe_uses_a_twin():
    w = _speed_widget()
    assert widgets.probe(w, "c", 0.0) == 2.0 and w.result == 2.0 / 1.5
    assert widgets.probe(w, "a", 4.0) == 4.0, "the twin keeps c = 0 from the previous probe"
    assert w.children[0].value == 2.0 and len(w._screen.timings) == 1, "the shown widget did not move"
    with pytest.raises(KeyError):
        widgets.probe(w, "nope", 1)


def test_steady_ylim_depends_on_the_data_alone():
    fig = widgets.new_figure((3, 2))
    ax = fig.add_subplot()
    final = []
    for path in ([0.5, 3.0, 1.1], [9.0, 0.2, 1.1], [1.1]):
        for hi in path:
            style.steady_ylim(ax, 0.0, hi)
        final.append(ax.get_ylim())
    assert final[0] == final[1] == final[2], f"the same data, the same axis, whatever the path: {final}"
    bottom, top = final[0]
    assert bottom == 0 and 1.1 < top <= 1.5, "a round top just above the data"
    assert not style.steady_ylim(ax, 0.0, 1.12), "data within the same step keep the axis"
    assert style.steady_ylim(ax, 0.0, 1.1, cover=2.0) and ax.get_ylim()[1] >= 2.0, "cover reaches other settings"
    style.steady_ylim(ax, -0.3, 1.0)
    assert ax.get_ylim()[0] < -0.3, "data below zero get a round bottom below them"


def test_png_leaves_a_live_widgets_canvas_alone():
    w = _speed_widget()
    fig = w._screen.fig
    widgets.png(fig)
    assert fig.canvas is w._screen.canvas, "a picture of the figure must not steal the widget's canvas"
    widgets.set_value(w, "c", 1.0)
    assert w.result == 1.0
