"""Notebook 01's widget: plain decoding against speculation, on one time axis.

Three lanes of N = 48 tokens each: plain decoding (drawn once), a typical speculative run and
the average one. The sliders set the draft's accuracy a, the guesses per round k and the
draft's cost c (in target calls); the title gives the speedup (1 - a^(k+1)) / (1 - a) / (1 + k c).
"""
from ...speed import costs
from .. import timeline, widgets

N = 48   # tokens in each lane


def build_timeline(fig):
    """What no slider changes: the plain lane, the axes; returns the two lanes and the title that move."""
    fig.set_layout_engine(None)  # fixed margins
    ax = fig.subplots(gridspec_kw=dict(left=0.12, right=0.97, bottom=0.18, top=0.8))  # room for "typical run"
    timeline.set_lane(timeline.lane(ax, 2), timeline.plain_schedule(N))
    run, average = timeline.lane(ax, 1, moving=True), timeline.lane(ax, 0, moving=True)
    timeline.frame(ax, ["plain", "typical run", "average"], timeline.room(N, N),
                   legend=False)  # colours as in section 5's figure
    return run, average, widgets.moving(ax.set_title("", y=1.0))


def update_timeline(parts, accuracy, k, c):
    """Refill both speculative lanes for (a, k, c) and retitle; returns the numbers it drew."""
    run_lane, average_lane, title = parts
    per_call = costs.expected_tokens(accuracy, k)   # the exact average, (1 - a^(k+1)) / (1 - a)
    simulated = timeline.simulated_mean(accuracy, k)  # the mean of 20,000 simulated rounds
    speed = per_call / (1 + k * c)
    run = timeline.typical_run(accuracy, k)           # of 64 seeded runs, the closest to the average
    longest = max(timeline.set_lane(run_lane, timeline.speculative_schedule(run, k, draft_step=c)),
                  timeline.set_lane(average_lane, timeline.average_schedule(per_call, N, k, draft_step=c)))
    title.axes.set_xlim(0, timeline.room(longest, N))  # the axis grows only when a lane outruns plain's
    verdict = "slower than" if speed < 1 else "faster than" if speed > 1 else "as fast as"
    title.set_text(f"{speed:.2f}x the plain speed: {verdict} plain decoding\n"
                   f"a = {accuracy:.2f}, k = {k}, c = {c:.2f}: (1 − aᵏ⁺¹)/(1 − a) = {per_call:.2f} "
                   f"tokens per target call (simulated: {simulated:.2f})")
    return {"tokens_per_call": per_call, "simulated": simulated, "speedup": speed, "run": list(run)}
