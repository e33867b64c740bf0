"""Development tooling for the course, never shipped in the wheel and never run by instructors.

  catalog          wrong and right answers for every exercise: the grader's report card
  mutants          runs a catalogued answer against a source notebook's graded tests
  badsubmissions   the kinds of broken submission a class grader must survive
  attacks          hostile submissions, one per class of attack on the grader
  exchange         plays an instructor and students through nbgrader's exchange
  bench, benches/  `make bench`: notebooks, grading, experiments, widgets
  screenshots      `make screenshots`: each notebook's main widget, from the browser tests
  gpu_matmul_check the one accelerator measurement notebook 07 ships
"""
