"""The tessera command line."""
from click.testing import CliRunner

from core.assembly import cli
from core.assembly.app import create_app
from core.testing import ApiClient


def run(args, data_dir, monkeypatch):
    monkeypatch.setenv("TESSERA_DATA_DIR", str(data_dir))
    monkeypatch.setenv("TESSERA_PLUGINS_AUTOLOAD", "false")
    monkeypatch.setenv("TESSERA_PASSWORD_HASH_TIME_COST", "1")
    monkeypatch.setenv("TESSERA_PASSWORD_HASH_MEMORY_KIB", "8")
    return CliRunner().invoke(cli.build_cli(), args)


def test_migrate_creates_the_app_db(tmp_path, monkeypatch):
    result = run(["migrate"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tessera.db").exists()


def test_create_admin_then_log_in(tmp_path, monkeypatch):
    result = run(["create-admin", "--email", "ops@example.com", "--password", "Headless-Adm1n",
                  "--first-name", "Op"], tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    app = create_app()
    client = ApiClient(app)
    assert client.get("/api/session/properties").json["has-user-setup"] is True
    response = client.post("/api/session", json={"username": "ops@example.com", "password": "Headless-Adm1n"})
    assert response.status_code == 200
    me = client.get("/api/user/current", headers={"X-Metabase-Session": response.json["id"]}).json
    assert me["is_superuser"] is True and me["first_name"] == "Op"


def test_create_admin_refuses_bad_input(tmp_path, monkeypatch):
    weak = run(["create-admin", "--email", "ops@example.com", "--password", "password1"], tmp_path, monkeypatch)
    assert weak.exit_code != 0 and "password is too common" in weak.output
    assert run(["create-admin", "--email", "ops@example.com", "--password", "Headless-Adm1n"],
               tmp_path, monkeypatch).exit_code == 0
    again = run(["create-admin", "--email", "ops@example.com", "--password", "Headless-Adm1n"], tmp_path, monkeypatch)
    assert again.exit_code != 0 and "already in use" in again.output
