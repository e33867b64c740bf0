"""speclab.views.timeline: plain and speculative schedules on one time axis."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from speclab.views import timeline


def test_timeline_schedules():
    plain = timeline.plain_schedule(48)
    spec = timeline.speculative_schedule([5, 5, 3], k=4, draft_step=0.1)
    assert timeline.finish_time(plain) == 48
    assert abs(timeline.finish_time(spec) - 3 * 1.4) < 1e-12
    fig, ax = plt.subplots()
    timeline.draw(ax, [("plain", plain), ("spec", spec)], title="t")
    plt.close(fig)
