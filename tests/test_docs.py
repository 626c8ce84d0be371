"""The README's quick start runs as written, against a live server started the way it says (`make run`),
and the docs stand alone: every link points at a file (and heading) of this repository."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.serving import ROOT, Served, free_port, server_env

README = ROOT / "README.md"
BLOCK = re.compile(r"^```sh (quickstart|quickstart-server)\n(.*?)^```$", re.S | re.M)
# The docs of the repository: every Markdown file a reader meets (the design notes of other projects are not).
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("contrib/*/README.md")),
        *sorted(ROOT.glob("bench/README.md"))]
# Names of material that lives outside the repository (the project's planning files).
OUTSIDE = ("../shared", "/work/", "API-SPEC", "DESIGN.md", "compat/")


def quickstart_blocks() -> tuple[str, list[str]]:
    blocks = BLOCK.findall(README.read_text())
    servers = [body for kind, body in blocks if kind == "quickstart-server"]
    assert len(servers) == 1, "the quick start starts the server in one block"
    return servers[0], [body for kind, body in blocks if kind == "quickstart"]


def made_venv(tmp_path: Path) -> Path:
    """A directory the Makefile takes for an installed .venv: its bin is this interpreter's (which has the
    `tessera` script), and the install stamp is new, so `make run` only starts the server."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "tessera").exists():
        pytest.skip(f"no tessera script next to {sys.executable}: install the checkout (pip install -e .) first")
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "bin").symlink_to(bin_dir)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / ".installed-run").touch()
    return venv


@pytest.mark.skipif(not (shutil.which("make") and shutil.which("curl") and shutil.which("bash")),
                    reason="the quick start needs make, curl and bash")
def test_readme_quickstart_runs_against_a_live_server(tmp_path):
    server_block, blocks = quickstart_blocks()
    command = shlex.split(server_block.strip())
    assert command == ["make", "run"], server_block
    assert len(blocks) >= 5
    port = free_port()
    env = server_env(tmp_path / "data")
    with Served([*command, f"VENV={made_venv(tmp_path)}", f"PORT={port}"], env, port, tmp_path / "server.log"):
        base = f"http://127.0.0.1:{port}"
        # curl exits non-zero on an HTTP error here (the README's calls print the error body instead).
        script = "set -euo pipefail\ncurl() { command curl --fail-with-body \"$@\"; }\n" + "\n".join(blocks)
        result = subprocess.run(["bash", "-c", script.replace("http://localhost:3000", base)], cwd=tmp_path,
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        assert "1 Sample Database sqlite" in lines
        assert {"1 ORDERS", "2 PEOPLE", "3 PRODUCTS", "4 REVIEWS"} <= set(lines)
        categories = [line.split() for line in lines if line.split()[0] in ("Doohickey", "Gadget", "Gizmo", "Widget")]
        assert len(categories) == 4 and all(int(n) > 0 for _, n in categories)
        assert any(re.fullmatch(r"\[\[\d+\]\]", line) for line in lines), "the MBQL count"
        link = lines[-1]
        assert link.startswith(f"{base}/public/dashboard/")
        with urllib.request.urlopen(link, timeout=10) as page:
            assert page.status == 200 and page.headers.get_content_type() == "text/html"
        uuid = link.rsplit("/", 1)[1]
        with urllib.request.urlopen(f"{base}/api/public/dashboard/{uuid}", timeout=10) as response:
            dashboard = json.load(response)
        assert dashboard["name"] == "First dashboard"
        assert [dc["card"]["name"] for dc in dashboard["dashcards"]] == ["Products per category"]


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_stand_alone(doc):
    text = doc.read_text()
    for name in OUTSIDE:
        assert name not in text, f"{doc.relative_to(ROOT)} refers to {name}, outside the repository"
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (doc.parent / file_part).resolve() if file_part else doc
        assert linked.is_relative_to(ROOT) and linked.exists(), f"{doc.relative_to(ROOT)}: broken link {target}"
        if anchor:
            assert anchor in _anchors(linked), f"{doc.relative_to(ROOT)}: no heading for {target}"


def test_docs_index_lists_the_guides():
    index = (ROOT / "docs" / "README.md").read_text()
    for guide in ("Quick start", "Configuration", "Deployment", "Writing a plugin", "Writing a driver"):
        assert f"[{guide}](" in index
    deployment = (ROOT / "docs" / "deployment.md").read_text()
    for topic in ("X-Forwarded-Proto", "[Service]", "FROM python", "pg_dump", ".backup", "tessera migrate"):
        assert topic in deployment
