"""How a test cell the judge runs ends, as nbformat outputs: what the student's function printed (bounded), the
error that stopped the cell, and the stops a call may end in (Late, Dead, Refused)."""
from nbformat.notebooknode import NotebookNode

STREAM_CAP = 100_000  # characters of the kernel's prints kept per call (CapOutput trims further)


class Late(BaseException):
    """A call ran past the test cell's time; BaseException, so that no `except Exception` in a test swallows it."""


class Dead(Late):
    pass


class Refused(Late):
    """The kernel's agent sent what the judge does not read (a line, or lines, past its budget for the call)."""


def append_stream(outputs, name, text):
    """A print added to a cell's outputs, merged with the stream before it of the same name, bounded."""
    if not text:
        return
    if outputs and outputs[-1].output_type == "stream" and outputs[-1].name == name:
        if len(outputs[-1].text) < STREAM_CAP:
            outputs[-1].text += text[:STREAM_CAP]
    else:
        outputs.append(NotebookNode(output_type="stream", name=name, text=text[:STREAM_CAP]))


def _text(e):
    try:
        return str(e)
    except Exception:
        return "?"


def _error(ename, evalue):
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])
