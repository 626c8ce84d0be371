"""`tessera run` serves the API through gunicorn on loopback."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_tessera_run_serves_health_and_setup_token(tmp_path):
    port = free_port()
    env = {**os.environ, "TESSERA_DATA_DIR": str(tmp_path), "TESSERA_PLUGINS_AUTOLOAD": "false",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen(
        [sys.executable, "-m", "core.assembly.cli", "run", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        body = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as response:
                    body = json.load(response)
                    break
            except OSError:
                time.sleep(0.2)
        assert body == {"status": "ok"}
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/session/properties", timeout=5) as response:
            token = json.load(response)["setup-token"]
        assert token
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=20)
    assert f"Setup token: {token}" in output
    assert "gthread" in output
