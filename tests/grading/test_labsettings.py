"""grading/labsettings.py: JupyterLab started from the course's environment does not ask about Jupyter news."""
import json

from jupyterlab_server.settings_utils import get_settings

from grading import labsettings


def test_the_news_question_is_answered_for_every_lab_of_the_environment(tmp_path):
    (tmp_path / "overrides.json").write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "x"}}))
    path = labsettings.write_overrides(tmp_path)
    written = json.loads(path.read_text())
    assert written["@jupyterlab/apputils-extension:themes"] == {"theme": "x"}, "other overrides are kept"
    # what JupyterLab's settings API serves for the plugin, with these overrides and no user setting
    from jupyterlab.labapp import LabApp

    app = LabApp()
    served, _ = get_settings(str(tmp_path), app.schemas_dir, str(tmp_path / "user"),
                             labsettings.PLUGIN, overrides=written)
    # the schema's default is "none": JupyterLab shows its "official Jupyter news?" toast until it is set
    assert served["schema"]["properties"]["fetchNews"]["default"] == "false"
    assert served["schema"]["properties"]["checkForUpdates"]["default"] is False


def test_it_is_where_the_environments_jupyterlab_reads_overrides():
    from jupyterlab.labapp import LabApp

    assert labsettings.settings_dir() == type(labsettings.settings_dir())(LabApp().app_settings_dir)
