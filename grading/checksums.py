"""nbgrader's OverwriteCells without its false alarm on honest work (nbgrader issue 1961).

generate_assignment records a locked test cell's checksum in the gradebook from the source cell, hidden tests
included, then writes the student copy with them cleared. Autograde's OverwriteCells compares the submitted
cell, the student copy's, with that checksum: on every honest submission it warns "Attribute 'checksum' for
cell test_... has changed!" once per test cell with hidden tests, and puts the source back (which is right).
A warning that fires on honest work teaches an instructor to ignore the real ones.

Here a locked cell whose source is the released one (the gradebook's source with its hidden tests cleared, as
generate_assignment clears them) is put back silently; any other change still warns, as nbgrader does.
"""
import copy

from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


def released_source(source, cell_type="code"):
    """What generate_assignment gives a student of a cell whose source (hidden tests included) is `source`."""
    from nbformat.v4 import new_code_cell, new_markdown_cell

    cell = (new_code_cell if cell_type == "code" else new_markdown_cell)(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class ReleasedOverwriteCells(OverwriteCells):
    """OverwriteCells that knows the released form of a locked cell is no change."""

    def preprocess_cell(self, cell, resources, cell_index):
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid is not None and cell.metadata.nbgrader.get("locked"):
            try:
                source = self.gradebook.find_source_cell(gid, self.notebook_id, self.assignment_id)
            except Exception:  # not in the gradebook: nbgrader's own step says so
                source = None
            if (source is not None and source.locked and cell.cell_type == source.cell_type
                    and cell.source != source.source
                    and cell.source.strip() == released_source(source.source, source.cell_type).strip()):
                cell = copy.deepcopy(cell)
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)
