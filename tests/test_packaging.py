"""Deployment from the checkout: `python -m build` makes an sdist and, from it, a wheel that installs into a
fresh venv and serves (migrations of the core and of every plugin, the Sample Database, the data files).

To stay fast the fresh venv gets the wheel only (--no-deps); the dependencies are this environment's,
reached through a .pth line. A .pth line adds a directory without running the .pth files inside it, so
this checkout's editable install there stays inert and `core` is imported from the wheel (checked).
Entry-point plugins are off for the same reason: the contrib drivers are installed here editable only.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.serving import ROOT, Served, free_port, server_env

# One worker builds once for the whole module (`make test` runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("packaging")

_IGNORED_EVERYWHERE = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info")
# Only at the top: `data` is also the name of a package directory (core/identity/data).
_IGNORED_AT_TOP = {".git", ".venv", "data", "build", "dist", ".pytest_cache", ".hypothesis", ".benchmarks"}


def _ignored(directory: str, names: list[str]) -> set[str]:
    top = set(names) & _IGNORED_AT_TOP if Path(directory) == ROOT else set()
    return top | _IGNORED_EVERYWHERE(directory, names)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> tuple[Path, Path, str]:
    """The sdist, the wheel built from it, and the build's output (from a copy of the checkout, so no
    build artefact lands in the working tree)."""
    pytest.importorskip("build", reason="`build` is in the dev extra: pip install -e '.[dev]'")
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=_ignored)
    result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(source)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (sdist,), (wheel,) = (tmp / "dist").glob("*.tar.gz"), (tmp / "dist").glob("*.whl")
    return sdist, wheel, result.stdout + result.stderr


def test_the_build_does_not_warn_about_package_data(dist):
    _, _, output = dist
    assert "absent from the `packages` configuration" not in output
    assert "would be ignored" not in output


def test_sdist_and_wheel_carry_the_license_and_every_data_file(dist):
    sdist, wheel, _ = dist
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "setup.py", "drivers/_sqlite_rows.c"} <= names
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert "License: Apache-2.0" in metadata or "License-Expression: Apache-2.0" in metadata
    assert any(n.endswith(".dist-info/LICENSE") or n.endswith("/licenses/LICENSE") for n in names)
    for expected in ("core/appdb/migrations/env.py", "core/appdb/migrations/versions/0001_foundation.py",
                     "plugins/dashboards/migrations/dashboards_0001_dashboards.py",
                     "plugins/actions/migrations/actions_0001_actions.py",
                     "core/identity/data/common_passwords.txt", "plugins/sharing/pages/page.html",
                     "plugins/sharing/pages/static/page.js", "plugins/xrays/templates/table/GenericTable.yaml",
                     "wsgi.py"):
        assert expected in names, expected
    assert any(n.startswith("drivers/_sqlite_rows.") and n.endswith(".so") for n in names) or \
        shutil.which("cc") is None, "the C row reader is compiled into the wheel where a compiler exists"


def _post(base: str, path: str, body: dict, session: str | None = None) -> dict:
    headers = {"Content-Type": "application/json", **({"X-Metabase-Session": session} if session else {})}
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def test_the_wheel_installs_into_a_fresh_venv_and_serves(dist, tmp_path):
    _, wheel, _ = dist
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-index", str(wheel)], check=True)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    dependencies = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "_tessera_test_dependencies.pth").write_text("\n".join(sorted(dependencies)) + "\n")

    env = server_env(tmp_path / "data", TESSERA_PLUGINS_AUTOLOAD="false")
    del env["PYTHONPATH"]
    where = subprocess.run([str(python), "-c", "import core, wsgi; print(core.__file__); print(wsgi.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(path).is_relative_to(venv) for path in where), where

    port = free_port()
    command = [str(venv / "bin" / "tessera"), "run", "--port", str(port), "--workers", "1"]
    with Served(command, env, port, tmp_path / "server.log", cwd=tmp_path) as server:
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{base}/api/session/properties", timeout=10) as response:
            token = json.load(response)["setup-token"]
        session = _post(base, "/api/setup", {"token": token, "prefs": {"site_name": "Wheel"},
                                             "user": {"email": "ops@example.com", "password": "Wheel-install-1"}})["id"]
        rows = _post(base, "/api/dataset", {"database": 1, "type": "native",
                                            "native": {"query": "SELECT COUNT(*) FROM PRODUCTS"}}, session)
        assert rows["data"]["rows"][0][0] > 0
        # A plugin's own tables (plugins/dashboards/migrations) exist.
        assert _post(base, "/api/dashboard", {"name": "From the wheel"}, session)["id"] > 0
        assert "accelerations:" in server.output()
