"""Figures and widgets: the course's style, live sliders (widgets), one drafted token (onetoken), one round
(roundview), schedules on a time axis (timeline), and each notebook's widget figure (figures/nbNN.py)."""
