"""Costs, hardware and the roofline: expected tokens, speedup, best k and break-even cost (05-06); model and
accelerator specs, bytes, MACs and step times, and this CPU's measured roofline (07)."""
