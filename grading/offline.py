"""Pages nbgrader renders with the course's config, offline: the formgrader's submission view typesets its
mathematics as the feedback pages do, as MathML made on the server (latex2mathml, installed with the course),
not by MathJax from a public CDN (offline, the maths showed as raw `$k$`).

grading/nbgrader_config.py names both pieces for nbconvert's HTMLExporter, which the formgrader and
generate_feedback use: the markdown filter below, and grading/offline_templates/nbconvert/templates/base/
mathjax.html.j2 (found first through JUPYTER_PATH), whose mathjax() macro loads nothing. The feedback exporter (grading/grade/feedback.py) renders markdown the same way.
"""
import os
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "offline_templates"


@jinja2.pass_context
def markdown2html(context, source):
    """nbconvert's markdown2html with its mathematics as MathML, and the HTML a submission controls cleaned."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    from .grade.feedback import _math_renderer, clean_html

    cell = context.get("cell", {})
    renderer = _math_renderer()(escape=False, attachments=cell.get("attachments", {}), embed_images=False, path="",
                                anchor_link_text="¶", exclude_anchor_links=False)
    return clean_html(MarkdownWithMath(renderer=renderer).render(source))


def use_offline_templates():
    """Put grading/offline_templates/ first on JUPYTER_PATH, in this process and those it starts, so
    nbconvert finds its nbconvert/templates/base/mathjax.html.j2 before its own. Not a template folder of
    HTMLExporter's config: the formgrader's app sets those itself, over the course's config."""
    paths = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    if str(TEMPLATES) not in paths:
        os.environ["JUPYTER_PATH"] = os.pathsep.join([str(TEMPLATES), *paths])
