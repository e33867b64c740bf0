"""The feedback page: hidden test code kept out of it (RedactHiddenTests), its HTML sanitised, and its
template compiled once per worker (FeedbackExporter)."""
import json
import re

import jinja2
from nbconvert.exporters import HTMLExporter
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from ..cells import is_graded, is_test


HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
REDACTED = "[the grader removed this output: it showed hidden test code]\n"


def _output_text(out):
    parts = [out.get("text", ""), out.get("evalue", ""), "\n".join(out.get("traceback", []) or [])]
    parts += [v for v in out.get("data", {}).values() if isinstance(v, str)]
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


# What a feedback page keeps of the HTML a markdown cell renders to (bleach's allow-list, as nbconvert's
# clean_html, with headings, paragraphs, images and tables): no script, style, iframe or event handler.
SAFE_TAGS = ["a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
             "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "span", "strong",
             "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "u", "ul"]
SAFE_ATTRIBUTES = {"*": ["class", "id", "title", "align"], "a": ["href"], "img": ["src", "alt", "width", "height"],
                   "td": ["colspan", "rowspan"], "th": ["colspan", "rowspan"]}


def clean_html(html):
    import bleach

    return bleach.clean(html, tags=SAFE_TAGS, attributes=SAFE_ATTRIBUTES,
                        protocols=["http", "https", "mailto", "data"], strip=True)


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTMLExporter (nbgrader's for feedback), whose templates are compiled once per worker:
    nbgrader makes a new exporter per generate_feedback call, and compiling the feedback template cost
    more than rendering it. Only the compiling is shared; each page is rendered by its own exporter.

    The page is sanitised: nbconvert's sanitize_html cleans the HTML outputs, and markdown is cleaned
    here once rendered (nbgrader's feedback template does not ask nbconvert to clean markdown)."""

    compiled = _CompiledTemplates()
    sanitize_html = Bool(True, help="strip scripts and event handlers from markdown and outputs").tag(config=True)

    @jinja2.pass_context
    def markdown2html(self, context, source):
        return clean_html(super().markdown2html(context, source))

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = self.compiled
        return environment
