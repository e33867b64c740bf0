"""A notebook's main widget in the page: found, moved with the keyboard until its figure changes,
photographed, and the time from a key press to the new figure measured as a learner feels it."""
import time

from labcells import widget_error_names
from labdriver import REDRAW_S, SCREENSHOTS

# The controls, in the order a "main widget" is picked and moved.
MOVABLE = (".widget-slider", ".widget-dropdown", ".widget-button")


def main_widget(page):
    """The notebook's first interactive widget that shows a figure (else the first one), or None."""
    widgets = page.locator(".jp-Notebook .widget-interact")
    first = None
    for i in range(widgets.count()):
        w = widgets.nth(i)
        if not any(w.locator(sel).count() for sel in MOVABLE):
            continue
        first = first or w
        if w.locator("img").count():
            return w
    return first


# What the widget's figure shows: its image's size and a hash of its bytes (None while it shows
# none). A speclab widget's figure is an Image widget, whose <img> gets a new blob: URL for every
# picture, even the same picture again, so only the bytes can tell a stale figure from a redrawn one
# (for a data: URL, bytes and src change together). FNV-1a, 32 bits: two different pictures agree by
# chance with probability 2^-32.
JS_FIGURE_KEY = """async w => {
  const img = w.querySelector('img'), src = img && img.getAttribute('src');
  if (!src) return null;
  let bytes;
  try { bytes = new Uint8Array(await (await fetch(src)).arrayBuffer()); }
  catch (e) { return null; }   // a blob: URL revoked as the next picture arrived: ask again
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) { h ^= bytes[i]; h = Math.imul(h, 0x01000193); }
  return bytes.length + ':' + (h >>> 0).toString(16);
}"""


def _figure_src(widget):
    """The widget's figure as JS_FIGURE_KEY sees it (None while it shows none)."""
    return widget.evaluate(JS_FIGURE_KEY) if widget.locator("img").count() else None


def _state(widget):
    return widget.evaluate("""w => [...w.querySelectorAll('.widget-readout, select')]
                                      .map(e => e.value !== undefined && e.tagName === 'SELECT' ? e.value : e.innerText)
                                      .join(' | ')""")


def move_main_widget(page, problems, student, redraw_s=REDRAW_S, report_missing=True, widget=None):
    """Move the main widget's first slider one step (or pick another dropdown option, or press its
    button), and check its figure is redrawn with no error. Returns the widget's locator (or None)."""
    widget = widget or main_widget(page)
    if widget is None:
        if report_missing:  # else Run All stopped early, which is reported already
            problems.add("main widget", "the notebook shows no interactive widget with a slider, dropdown or button")
        return None
    widget.scroll_into_view_if_needed()
    before_src, before = _figure_src(widget), _state(widget)
    if widget.locator(".widget-slider").count():
        slider = widget.locator(".widget-slider").first
        label = slider.locator(".widget-label").first.inner_text().strip()
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        deadline = time.monotonic() + 2
        while _state(widget) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        back = "ArrowLeft"
        if _state(widget) == before:  # at its maximum: step left instead
            handle.press("ArrowLeft")
            back = "ArrowRight"
        action = f"slider {label!r}"
    elif widget.locator(".widget-dropdown select").count():
        select = widget.locator(".widget-dropdown select").first
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("s => s.options[s.selectedIndex].text")
        other = next((o for o in options if o != current), current)
        select.select_option(label=other)
        action = f"dropdown: {current!r} -> {other!r}"
    else:
        widget.locator(".widget-button").first.click()
        action = "button"
    after = _state(widget)
    if widget.locator(".widget-slider").count() and after == before:
        problems.add("main widget", f"moving {action} with the arrow keys did not change its value ({before})")
        return widget
    deadline = time.monotonic() + redraw_s
    while time.monotonic() < deadline:
        src = _figure_src(widget)
        stderr = widget.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
        if src and src != before_src:
            break
        if stderr:
            break
        time.sleep(0.25)
    stderr = widget.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
    names = widget_error_names(stderr)
    bad = [n for n in names if not (student and n == "NotImplementedError")]
    if bad:
        problems.add("main widget", f"after moving {action} ({before} -> {after}) its update raised "
                                    f"{', '.join(bad)}: {' | '.join(stderr)[-400:]}")
    elif before_src is None and not names:
        problems.add("main widget", f"showed no figure before moving {action}")
    elif before_src is not None and (src is None or src == before_src):
        problems.add("main widget", f"moved {action} ({before} -> {after}); the figure did not change "
                                    f"within {redraw_s} s")
    elif before_src is not None and action.startswith("slider") and not names:
        # Step back: the widget must draw, for the values it showed after Run All, the figure it
        # showed then. If not, that figure was stale or garbled (e.g. a later cell drove the
        # displayed widget from the kernel while the page was echoing its slider values back).
        moved_src = src
        handle.press(back)
        deadline = time.monotonic() + redraw_s
        while time.monotonic() < deadline:
            src = _figure_src(widget)
            if _state(widget) == before and src and src != moved_src:
                break
            time.sleep(0.25)
        if _state(widget) != before:
            problems.add("main widget", f"stepping {action} back did not return it to {before} "
                                        f"(shows {_state(widget)})")
        elif src != before_src:
            problems.add("main widget", f"after Run All it showed a figure for ({before}) that differs from "
                                        f"the one it draws for the same values when stepped back to them: "
                                        f"the figure shown after Run All was stale or garbled (does a later "
                                        f"cell change this displayed widget?)")
    return widget


def screenshot(page, widget, name):
    """The main widget's cell, else the window, as SCREENSHOTS/name.png.

    A cell scrolled into view paints its figure over a few frames: shoot until two shots agree."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    target = widget.locator("xpath=ancestor::div[contains(@class, 'jp-Cell')][1]").first if widget else None
    if target is None or not target.count():
        page.screenshot(path=str(path))
        return path
    target.scroll_into_view_if_needed()
    for img in widget.locator("img").all():
        img.evaluate("i => i.decode().catch(() => null)")
    shot, previous = None, None
    for _ in range(10):
        page.wait_for_timeout(250)
        shot = target.screenshot()
        if shot == previous:
            break
        previous = shot
    path.write_bytes(shot)
    return path



# Installed once on a widget's node. A keydown or pointerdown inside the widget (capture phase, so
# before the slider handles it) stamps the start of a move with performance.now(); a MutationObserver
# stamps the moment the widget's first <img> has a src other than the one it had when the move was
# armed (the kernel's new figure is in the page: `shown`), then the first frame after that image is
# decoded (the learner sees it: `painted`). Every number is taken in the page: how Python waits for
# it adds nothing. On the way, the kernel connection's messages say where the time went: `sent`, the
# page sending the move's comm message; `busy` and `displayed`, the kernel starting on it and
# publishing its figure (the kernel's own clock: the same machine's), as a display output or as an
# Image widget's new value (speclab.views.widgets); `received`, that figure reaching the page. An Image
# widget's <img> gets a new blob: URL for each new picture, so a new src is a new figure either way.
JS_LATENCY_WATCH = """w => {
  if (w.__latency) return;
  const s = w.__latency = {};
  const srcNow = () => { const i = w.querySelector('img'); return i ? i.getAttribute('src') : null; };
  s.arm = () => {
    Object.assign(s, {t0: null, sent: null, msgId: null, busy: null, displayed: null, received: null,
                      shown: null, painted: null, src: srcNow()});
  };
  s.arm();
  const start = () => { if (s.t0 === null) s.t0 = performance.now(); };
  w.addEventListener('keydown', start, true);
  w.addEventListener('pointerdown', start, true);
  new MutationObserver(() => {
    if (s.t0 === null || s.shown !== null) return;
    const img = w.querySelector('img'), src = img && img.getAttribute('src');
    if (!src || src === s.src) return;
    s.shown = performance.now();
    img.decode().catch(() => null).then(() => requestAnimationFrame(() => { s.painted = performance.now(); }));
  }).observe(w, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  const kernelTime = date => Date.parse(date) - performance.timeOrigin;
  if (kernel) kernel.anyMessage.connect((_, args) => {
    const msg = args.msg, type = msg.header.msg_type, now = performance.now();
    if (s.t0 === null) return;
    if (args.direction === 'send') {
      if (type === 'comm_msg' && s.sent === null) { s.sent = now; s.msgId = msg.header.msg_id; }
      return;
    }
    if (!s.msgId || !msg.parent_header || msg.parent_header.msg_id !== s.msgId) return;
    if (type === 'status' && msg.content.execution_state === 'busy' && s.busy === null) s.busy = kernelTime(msg.header.date);
    const data = msg.content.data || {};
    const figure = (type === 'display_data' && data['image/png'])
      || (type === 'comm_msg' && data.method === 'update' && (data.buffer_paths || []).some(p => p[0] === 'value'));
    if (figure && s.received === null) {
      s.received = now; s.displayed = kernelTime(msg.header.date);
    }
  });
}"""
JS_LATENCY_ARM = "w => w.__latency.arm()"
JS_LATENCY_READ = """w => { const s = w.__latency, ms = t => t === null ? null : Math.round(10 * (t - s.t0)) / 10;
  return {sent: ms(s.sent), busy: ms(s.busy), displayed: ms(s.displayed), received: ms(s.received),
          shown: ms(s.shown), painted: ms(s.painted)}; }"""
JS_LATENCY_DONE = "w => w.__latency.painted !== null"

# The main widget's controls are moved with the keys a learner uses on a focused control: a slider
# steps and jumps to its two ends (where axes rescale, if they ever do); a dropdown steps through
# its options and jumps to the first and last. A key that leaves the value where it was (an end
# already reached) is no move and is skipped. The first LATENCY_CONTROLS controls are moved (sliders
# first), the sequence repeated until min_moves moves were made (at most twice): `make bench` asks for
# LATENCY_MIN_MOVES, enough for a median; the browser test, which only checks that every move redraws,
# makes each move of the sequence once (the second pass repeats the same steps and ends).
LATENCY_KEYS = {".widget-slider": ("ArrowRight", "ArrowRight", "ArrowLeft", "End", "ArrowLeft", "Home", "ArrowRight"),
                ".widget-dropdown": ("ArrowDown", "ArrowDown", "ArrowUp", "End", "Home", "ArrowDown")}
LATENCY_CONTROLS = 2
LATENCY_MIN_MOVES = 10


def _control_value(control):
    """What a slider's readout or a dropdown's selected option shows."""
    return control.evaluate("""c => { const s = c.querySelector('select');
      if (s) return s.selectedIndex < 0 ? '' : s.options[s.selectedIndex].text;
      const r = c.querySelector('.widget-readout'); return r ? r.innerText : ''; }""")


def measure_latency(page, widget, redraw_s=REDRAW_S, min_moves=LATENCY_MIN_MOVES):
    """Move the widget's controls with the keyboard, one move at a time, each awaited until its new
    figure is painted. Returns one dict per move: control, key, values, `ms` (key press to the new
    image's src in the page) and `painted_ms` (to the first frame after that image is decoded);
    `ms` is None for a move whose figure never changed within redraw_s (a failure for the caller).
    `at` holds the milestones of JS_LATENCY_WATCH in ms from the key press (None where not seen)."""
    widget.scroll_into_view_if_needed()
    node = widget.element_handle()
    page.evaluate(JS_LATENCY_WATCH, node)
    controls = []
    for kind, keys in LATENCY_KEYS.items():
        found = widget.locator(kind)
        controls += [(found.nth(i), keys) for i in range(found.count())]
    controls = controls[:LATENCY_CONTROLS]
    moves = []
    for _ in range(2):
        for control, keys in controls:
            label = control.locator(".widget-label").first.inner_text().strip()
            target = control.locator(".noUi-handle, select").first
            for key in keys:
                before = _control_value(control)
                page.evaluate(JS_LATENCY_ARM, node)
                target.focus()
                target.press(key)
                after = _control_value(control)
                if after == before:
                    continue
                move = {"control": label, "key": key, "from": before, "to": after, "ms": None, "painted_ms": None}
                moves.append(move)
                try:
                    page.wait_for_function(JS_LATENCY_DONE, arg=node, timeout=redraw_s * 1000, polling=50)
                except Exception:  # a playwright TimeoutError: the figure never changed
                    continue
                s = page.evaluate(JS_LATENCY_READ, node)
                move.update(ms=s["shown"], painted_ms=s["painted"], at=s)
        if len(moves) >= min_moves:
            break
    return moves


def latency_summary(moves):
    """{moves, median, max, painted_median, painted_max} in ms over the moves that redrew (None when none)."""
    import statistics
    done = [m for m in moves if m["ms"] is not None]
    if not done:
        return {"moves": len(moves), "redrawn": 0}
    ms, painted = [m["ms"] for m in done], [m["painted_ms"] for m in done]
    return {"moves": len(moves), "redrawn": len(done), "median": round(statistics.median(ms), 1),
            "max": max(ms), "painted_median": round(statistics.median(painted), 1), "painted_max": max(painted)}
