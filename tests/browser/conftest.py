"""One JupyterLab server on a throwaway copy of the course and one headless Chromium, for the session (under
xdist, per worker: each of the two browser groups has its own), with one tab in which JupyterLab's front end
is loaded once: each test opens its notebook there (labpage.LabTab says how tests are kept apart).

Chromium or Playwright missing is a failure (CI installs both), unless SPECLAB_SKIP_BROWSER=1,
which turns it into a skip that says what is missing.
"""
import os

import pytest

import labdriver as lab_
import labpage


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Make `pytest -n N --dist loadgroup` keep each xdist group on one worker (a browser group: one server,
    one browser, each source run before its student copy).

    xdist 3.8 groups by appending "@group" to a test's node id, which it still sets through
    `item._nodeid`; pytest 9 keeps the id in `item._id`, so the group is lost and the browser tests
    are spread over the workers. This sets the suffix the way pytest 9 reads it; with another
    pytest, or without --dist loadgroup, it does nothing."""
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:
        return
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark and "@" not in item.nodeid and hasattr(item, "_id"):
            item._id = coerce_node_id(f"{item.nodeid}@{mark.args[0]}")

@pytest.fixture(scope="session")
def browser_parts():
    missing = lab_.missing_browser_parts()
    if missing:
        message = "browser tests need " + " and ".join(missing)
        if os.environ.get("SPECLAB_SKIP_BROWSER") == "1":
            pytest.skip(message + " (skipped because SPECLAB_SKIP_BROWSER=1)")
        pytest.fail(message + "; set SPECLAB_SKIP_BROWSER=1 to skip the browser tests instead",
                    pytrace=False)


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="session")
def lab(browser_parts, session_dir):
    """JupyterLab serving a copy of solutions/ and notebooks/; SPECLAB_COURSE_ROOT points nbgrader at it."""
    root = lab_.copy_course(session_dir / "course")
    server = lab_.LabServer(root, session_dir)
    yield server
    killed = server.stop()
    assert not killed, f"JupyterLab left processes behind that had to be killed: {killed}"


@pytest.fixture(scope="session")
def browser(browser_parts, session_dir, playwright):
    before = lab_.descendants(os.getpid())
    context = lab_.launch_browser(playwright, session_dir / "chromium-profile")
    context.set_default_timeout(lab_.RENDER_S * 1000)
    started = lab_.descendants(os.getpid()) - before  # Chromium (and Playwright's driver, if it is new)
    try:
        yield context
    finally:
        # only what the browser itself started: other tests in this session leave their own
        # long-lived children (the grader's fork server), which are not Chromium's to answer for
        for pid in list(started):
            started |= lab_.descendants(pid)
        context.close()
    left = lab_.stop_pids(started)
    assert not left, f"Chromium or Playwright left processes behind that had to be killed: {left}"


@pytest.fixture(scope="session")
def source_runs():
    """What each source notebook showed, per cell, so its student copy can be compared with it."""
    return {}


@pytest.fixture(scope="session")
def lab_tab(browser, lab):
    """One tab for the session, in which JupyterLab's front end is loaded once (on first use)."""
    tab = labpage.LabTab(browser.new_page(), lab)
    yield tab
    tab.page.close()


@pytest.fixture
def page(lab_tab, lab):
    """The session's JupyterLab tab, with no document open; after the test its documents are closed
    (unsaved) and every kernel is shut down, so one notebook's kernel never outlives its test."""
    lab_tab.start_test()
    try:
        yield lab_tab.page
    finally:
        lab_tab.end_test()
        lab.shutdown_kernels()


@pytest.fixture
def js_errors(page, lab_tab):
    """The JavaScript exceptions and console errors the JupyterLab tab shows during this test."""
    return lab_tab.errors


@pytest.fixture
def new_tab(browser):
    """A tab of its own, for a test that leaves JupyterLab (the shared tab stays on it); closed after."""
    tab = browser.new_page()
    try:
        yield tab
    finally:
        tab.close()
