"""The feedback page: hidden test code kept out of it (RedactHiddenTests), its HTML sanitised, and its
template compiled once per worker (FeedbackExporter)."""
import json
import re

import jinja2
from nbconvert.exporters import HTMLExporter
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from ..cells import grade_id, is_graded, is_test


HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
REDACTED = "[the grader removed this output: it showed hidden test code]\n"


def _output_text(out):
    parts = [out.get("text", ""), out.get("evalue", ""), "\n".join(out.get("traceback", []) or [])]
    parts += [v for k, v in out.get("data", {}).items() if isinstance(v, str) and k not in FIGURE_TYPES]
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


class RedactHiddenTests(NbGraderPreprocessor):
    """Before ClearHiddenTests (which clears their source): an output anywhere in the notebook that shows
    hidden test code (a marker, or a line of it of 20 characters or more, also as a repr writes it) is
    replaced by a line saying so. A kernel's history (`In`, `_ih`, `inspect`) holds every test it ran."""

    def preprocess(self, nb, resources):
        visible = {ln.strip() for c in nb.cells for ln in HIDDEN_BLOCK.sub("", c.source).splitlines()}
        lines = {ln.strip() for c in nb.cells if is_graded(c)
                 for block in HIDDEN_BLOCK.findall(c.source) for ln in block.splitlines()}
        needles = {"BEGIN HIDDEN TESTS", "END HIDDEN TESTS"}
        for ln in lines - visible:
            if len(ln) >= 20:
                needles |= {ln, repr(ln)[1:-1], json.dumps(ln)[1:-1]}
        for cell in nb.cells:
            if not is_test(cell):
                # nbgrader's ClearHiddenTests reads every cell: the marker's text in a student's own cell made it
                # fail ("No end hidden tests statement found") and the page was not written
                for marker in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
                    cell.source = cell.source.replace(marker, marker.replace(" ", "-"))
            if cell.cell_type != "code":
                continue
            for i, out in enumerate(cell.get("outputs", [])):
                text = _output_text(out)
                if any(n in text for n in needles):
                    cell.outputs[i] = NotebookNode(output_type="stream", name="stdout", text=REDACTED)
        return nb, resources


class _CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates, kept in memory for the worker's life (keyed by name and source checksum)."""

    def __init__(self):
        self.store = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.store:
            bucket.bytecode_from_string(self.store[bucket.key])

    def dump_bytecode(self, bucket):
        self.store[bucket.key] = bucket.bytecode_to_string()


# ----------------------------------------------------------------------------- what a page keeps

# What a feedback page keeps of any HTML a submission controls (a markdown cell once rendered, an HTML or
# markdown output): the tags the course's pages need, MathML (the typeset mathematics), no script, style, iframe,
# form or event handler; no class a page's own styles know (nbgrader's panels, scores, alerts; the grading-notes
# box) but those of highlighted code; an id on headings only (their anchors); links to the web or the page
# itself, and no image that is not one of the page's own figures (outputs, embedded by the page's template,
# which this never sees): so nothing is loaded from elsewhere, and nothing looks like the grader speaking.
SAFE_TAGS = ["a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
             "h3", "h4", "h5", "h6", "hr", "i", "ins", "kbd", "li", "ol", "p", "pre", "s", "span", "strong",
             "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "u", "ul"]
MATHML_TAGS = ["math", "mi", "mn", "mo", "ms", "mspace", "mtext", "mrow", "mfrac", "msqrt", "mroot", "mstyle", "merror",
               "mpadded", "mphantom", "menclose", "msub", "msup", "msubsup", "munder", "mover", "munderover",
               "mtable", "mtr", "mtd", "mlabeledtr", "semantics", "annotation", "mfenced"]
MATHML_ATTRIBUTES = ["display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "accent",
                     "accentunder", "columnalign", "columnspacing", "rowspacing", "columnlines", "rowlines", "frame",
                     "linethickness", "minsize", "maxsize", "movablelimits", "symmetric", "largeop", "form", "width",
                     "height", "depth", "voffset", "scriptlevel", "displaystyle", "encoding", "notation", "xmlns",
                     "open", "close", "separators"]
# pygments' token classes (code blocks in markdown), and the few the markdown renderer itself writes
SAFE_CLASSES = {"highlight", "anchor-link"} | set(__import__("pygments.token", fromlist=["STANDARD_TYPES"])
                                                    .STANDARD_TYPES.values()) - {""}
LINK_PROTOCOLS = ["http", "https", "mailto"]


def _attribute_allowed(tag, name, value):
    if tag in MATHML_TAGS:
        return name in MATHML_ATTRIBUTES
    if name in ("title", "align") or (tag in ("td", "th") and name in ("colspan", "rowspan")):
        return True
    if name == "class":
        return all(c in SAFE_CLASSES or c.startswith(("hl-", "language-")) for c in value.split())
    if name == "id":
        return tag in ("h1", "h2", "h3", "h4", "h5", "h6")
    return tag == "a" and name == "href"   # bleach keeps only LINK_PROTOCOLS and relative (#anchor) addresses


def clean_html(html):
    """Any HTML a submission controls, reduced to what a feedback page keeps (above)."""
    import bleach

    html = html.decode() if isinstance(html, bytes) else str(html)
    return bleach.clean(html, tags=SAFE_TAGS + MATHML_TAGS, attributes=_attribute_allowed,
                        protocols=LINK_PROTOCOLS, strip=True, strip_comments=True)


# ----------------------------------------------------------------------------- mathematics, offline

def tex_to_mathml(tex, display=False):
    """TeX as MathML (latex2mathml, at grading time: the page needs no script and no network to show it, as
    browsers draw MathML themselves); TeX the converter does not know stays as code."""
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # a student's unbalanced brace: shown as written
        return f"<code>{_escape(tex)}</code>"


def _escape(text):
    import html

    return html.escape(text, quote=False)


def _math_renderer():
    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class MathMLRenderer(IPythonRenderer):
        """nbconvert's markdown renderer, with its mathematics as MathML instead of TeX left for MathJax."""

        def block_math(self, body):
            return tex_to_mathml(body, display=True)

        def inline_math(self, body):
            return tex_to_mathml(body)

        def latex_environment(self, name, body):
            return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)

        def multiline_math(self, text):
            return tex_to_mathml(text.strip().strip("$"), display=True)

    return MathMLRenderer


_MATH_IN_TEXT = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\$(.+?)\$|\\\((.+?)\\\)", re.S)


def latex_output_to_html(text):
    """A text/latex output ($...$, $$...$$, \\(...\\), \\[...\\]) as HTML with MathML, the rest escaped."""
    out, at = [], 0
    for m in _MATH_IN_TEXT.finditer(text):
        out.append(_escape(text[at:m.start()]))
        block = m.group(1) is not None or m.group(2) is not None
        out.append(tex_to_mathml(next(g for g in m.groups() if g is not None), display=block))
        at = m.end()
    out.append(_escape(text[at:]))
    return "".join(out)


# ----------------------------------------------------------------------------- the page

_DOCSTRING = re.compile(r'^\s*(?:[rRuU]?)("""|\'\'\'|"|\')(.*?)(?:\1|$)', re.S)


def what_it_tests(cell):
    """What a test cell tests, in words: the first line of its docstring, or its id."""
    m = _DOCSTRING.match(cell.get("source", ""))
    first = m.group(2).strip().splitlines()[0].strip() if m and m.group(2).strip() else ""
    return first[:160] or grade_id(cell) or "test"


def _label_tests(page, nb):
    """nbgrader's template lists every test as "Test cell": name each by what it tests (what_it_tests)."""
    import html

    for cell in nb.cells:
        if is_test(cell):
            gid = grade_id(cell)
            label = f"<code>{html.escape(gid)}</code>: {html.escape(what_it_tests(cell))}"
            page = page.replace(f'<a href="#{gid}">Test cell</a>', f'<a href="#{gid}">{label}</a>', 1)
    return page


def _label_comments(page, nb):
    """nbgrader's index lists a comment on each unanswered exercise as a bare "Comment": name the exercise, and
    say what the comment is."""
    import html

    for cell in nb.cells:
        comment = cell.get("metadata", {}).get("nbgrader", {}).get("comment")
        if comment and grade_id(cell):
            gid = html.escape(grade_id(cell))
            what = "not answered" if comment.strip() == "No response." else "a comment on your answer"
            page = page.replace(f'<a href="#comment-{gid}">Comment</a>',
                                f'<a href="#comment-{gid}"><code>{gid}</code>: {what}</a>', 1)
    return page


_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.S | re.I)
_REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.I)


# a failed test's cell: its message drawn above its source (the template writes the source first)
FAILED_TAG = "speclab-failed"
_TAG = re.compile(r"[\w-]{1,60}")
# MathML drawn by the browser: a little larger than the text around it, as MathJax drew it; an output's long line
# (a failure message) wrapped inside its box, as a terminal wraps it; the reveal set apart from the notebook's text
PAGE_STYLE = ('<style type="text/css">math { font-size: 1.15em; } '
              'math[display="block"] { font-size: 1.3em; margin: 0.6em 0; } '
              'div.output_area pre { white-space: pre-wrap; overflow-wrap: anywhere; } '
              'div.speclab-reveal { border-left: 4px solid #2e7d32; background: #f2f8f0; padding: 0.3em 1em; '
              'margin: 0.6em 0; } div.speclab-reveal > h4.speclab-reveal-title { margin-top: 0.4em; color: #2e7d32; }'
              f' div.celltag_{FAILED_TAG} {{ display: flex; flex-direction: column; }}'
              f' div.celltag_{FAILED_TAG} > div.output_wrapper {{ order: -1; }}'
              '</style>')
REVEAL_OPEN = '<div class="speclab-reveal"><h4 class="speclab-reveal-title">The reveal</h4>'
# an interactive widget's output (its view needs a live kernel and a script): one line in its place
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_LINE = ("<p><em>An interactive widget: it is live in JupyterLab (make lab), where its controls move its "
               "figure; this page cannot run it.</em></p>")


def _no_active_or_remote(page):
    """The page's own scripts (MathJax from a CDN, its configuration) and remote style sheets removed: the
    mathematics is MathML already, and a feedback page is read offline."""
    page = _REMOTE_LINK.sub("", _SCRIPT.sub("", page))
    return page.replace("</head>", PAGE_STYLE + "</head>", 1)


def _prepare_cells(nb):
    """A cell's tags become classes on the page: only word-like ones are kept (a tag with a space would add any
    class, the grader's own included); a failed test cell is tagged FAILED_TAG, so its message comes first."""
    for cell in nb.cells:
        cell_tags = [t for t in cell.get("metadata", {}).get("tags", []) or []
                     if isinstance(t, str) and _TAG.fullmatch(t) and t != FAILED_TAG]
        if is_test(cell) and any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            cell_tags.append(FAILED_TAG)
        if cell_tags or "tags" in cell.get("metadata", {}):
            cell.metadata["tags"] = cell_tags


def _prepare_outputs(nb):
    """Before rendering: a text/latex output becomes MathML; no output keeps nbconvert's `isolated` flag (an
    iframe with a data: address); only figures keep their metadata (width, height)."""
    _prepare_cells(nb)
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = out.get("data")
            if not isinstance(data, dict):
                continue
            if WIDGET_VIEW in data and not any(k in data for k in FIGURE_TYPES):
                out["data"] = data = NotebookNode({"text/html": WIDGET_LINE})
            if isinstance(data.get("text/latex"), str) and "text/html" not in data:
                data["text/html"] = latex_output_to_html(data.pop("text/latex"))
            metadata = out.get("metadata") or {}
            out["metadata"] = NotebookNode({k: v for k, v in metadata.items() if k in FIGURE_TYPES
                                            and isinstance(v, dict) and not v.get("isolated")})


FIGURE_TYPES = ("image/png", "image/jpeg")


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTMLExporter (nbgrader's for feedback), whose templates are compiled once per worker:
    nbgrader makes a new exporter per generate_feedback call, and compiling the feedback template cost
    more than rendering it. Only the compiling is shared; each page is rendered by its own exporter.

    The page is sanitised: every piece of HTML a submission controls goes through clean_html (markdown cells
    once rendered, which nbgrader's feedback template does not ask nbconvert to clean; HTML and markdown
    outputs); its mathematics is MathML, made here; it has no script and loads nothing (figures are embedded);
    and each test is named by what it tests."""

    compiled = _CompiledTemplates()
    sanitize_html = Bool(True, help="strip scripts and event handlers from markdown and outputs").tag(config=True)

    @jinja2.pass_context
    def markdown2html(self, context, source):
        from nbconvert.filters.markdown_mistune import MarkdownWithMath

        cell = context.get("cell", {})
        renderer = _math_renderer()(escape=False, attachments=cell.get("attachments", {}), embed_images=False,
                                    path="", anchor_link_text=self.anchor_link_text,
                                    exclude_anchor_links=self.exclude_anchor_links, **self.lexer_options)
        html = clean_html(MarkdownWithMath(renderer=renderer).render(source))
        # the course's reveal (grading/reveal.py: only its PlaceReveals step leaves the tag on a cell)
        return REVEAL_OPEN + html + "</div>" if "reveal" in cell.get("metadata", {}).get("tags", []) else html

    def default_filters(self):
        for name, function in super().default_filters():
            yield name, (clean_html if name == "clean_html" else function)

    def from_notebook_node(self, nb, resources=None, **kw):
        _prepare_outputs(nb)
        page, resources = super().from_notebook_node(nb, resources, **kw)
        return _label_comments(_label_tests(_no_active_or_remote(page), nb), nb), resources

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = self.compiled
        return environment


def feedback_exporter():
    """A FeedbackExporter configured as nbgrader's generate_feedback configures its exporter (the feedback
    template, nbgrader's templates and bootstrap's CSS); for rendering a page outside nbgrader (tests)."""
    import os

    from nbgrader.converters import generate_feedback
    from traitlets.config import Config

    here = os.path.dirname(generate_feedback.__file__)
    formgrader = os.path.join(here, "..", "server_extensions", "formgrader")
    c = Config()
    c.HTMLExporter.template_name = "feedback"
    c.HTMLExporter.extra_template_basedirs = [os.path.abspath(os.path.join(formgrader, "templates"))]
    c.HTMLExporter.extra_template_paths = [os.path.abspath(os.path.join(
        formgrader, "static", "node_modules", "bootstrap", "dist", "css"))]
    return FeedbackExporter(config=c)
