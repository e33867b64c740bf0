"""nbgrader's Validate (JupyterLab's Validate button, `nbgrader validate`) with each failure's message first and
the test's source after it.

nbgrader's result lists a failed cell as {"source", "error"}, and its JupyterLab dialog draws "source" first, as
text, then "error", as HTML: a test's whole source stood between the student and the one line saying what went
wrong. install() (called by grading/nbgrader_config.py, which the Validate handler loads before validating) hands
the dialog the message as "source" and the test as "error"; the terminal's print says the same in that order.
"""
import html

from nbconvert.filters import strip_ansi

TEST_HEADING = "The test that failed:"


def message_first(failed):
    """One failed cell of nbgrader's result, message first: {"source": the message (plain text), "error": the test
    (escaped HTML, under a heading), "raw_error": the test (text), "test": its source}."""
    test, message = failed.get("source", ""), strip_ansi(failed.get("raw_error", "")).strip()
    return {"source": message, "error": html.escape(f"{TEST_HEADING}\n\n{test}"), "raw_error": test, "test": test,
            "message": message}


def install():
    from nbgrader.validator import Validator

    if getattr(Validator.validate, "message_first", False):
        return
    validate = Validator.validate

    def validate_message_first(self, filename):
        results = validate(self, filename)
        if "failed" in results:
            results["failed"] = [message_first(f) for f in results["failed"]]
        return results

    def print_error(self, message, test):
        self.stream.write("\n" + "=" * self.width + "\n")
        self.stream.write("The following cell failed:\n\n")
        self.stream.write(self._indent(message) + "\n\n")
        self.stream.write(TEST_HEADING + "\n\n")
        self.stream.write(self._indent(test) + "\n\n")

    validate_message_first.message_first = True
    Validator.validate = validate_message_first
    Validator._print_error = print_error
