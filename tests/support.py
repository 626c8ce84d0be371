"""Helpers for tests that build apps with extra plugins written on the fly."""
import textwrap
import uuid


def write_plugin(tmp_path, monkeypatch, source: str) -> str:
    """Write a plugin module into an importable folder and return its module name."""
    name = f"tessera_test_plugin_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "plugin_path"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    return name
