"""speclab.views: style, widgets, onetoken, roundview, timeline, figures."""
