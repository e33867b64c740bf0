"""xdist's --dist loadgroup, made to finish when a worker crashes (a pytest plugin; tests/conftest.py loads it).

pytest-xdist 3.8.0 (the newest release) deadlocks the run after a worker dies under loadgroup: CI once sat
idle from 98 % of the tests to its 90-minute limit after one worker aborted. Two faults of
LoadScopeScheduling, both reported upstream (pytest-xdist issues 1323, 1327, 1378; fixed on its main
branch, not released):

- remove_node puts the dead worker's whole workload back on the queue, finished groups included; a
  finished group later goes to a worker as an empty batch, which never completes, so nothing is
  scheduled again. It also queues the test the worker died in, which kills its replacement in turn.
- a worker runs a test only once it knows the next one (or that there is none); the replacement worker
  gets a single group, and a group of one test then waits for a second forever.

Here: only unfinished groups go back, less the test that crashed (xdist has already reported it failed);
and a worker is never left holding a single test with more work queued or without being told it is its last.
"""
import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class CrashSafeLoadGroup(LoadGroupScheduling):
        def remove_node(self, node):
            workload = self.assigned_work.pop(node)
            unfinished = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
            if not unfinished:
                return None
            crashed = next(nodeid for unit in unfinished.values() for nodeid, done in unit.items() if not done)
            for unit in unfinished.values():
                unit.pop(crashed, None)  # reported failed by xdist already; not run again
            self.workqueue.update({scope: unit for scope, unit in unfinished.items()
                                   if unit and not all(unit.values())})
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

        def _reschedule(self, node):
            super()._reschedule(node)
            if node.shutting_down:
                return
            while self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
                self._assign_work_unit(node)  # one test alone is not run until a second comes
            if not self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
                node.shutdown()  # its last test: the worker runs it once told so

    return CrashSafeLoadGroup(config, log)
