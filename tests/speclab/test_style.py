"""speclab.views.style: the colours, the heatmap and axis limits that do not jump as a slider moves."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from speclab import draft, target
from speclab.views import style, widgets


def test_style_and_heatmap():
    style.use()
    fig, ax = plt.subplots()
    style.table_heatmap(ax, target(), "P")
    style.paired_bars(ax, [("p", target()[0], "target"), ("q", draft()[0], "draft")])
    assert len(ax.patches) > 6
    plt.close(fig)


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
