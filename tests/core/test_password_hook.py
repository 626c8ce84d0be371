"""The authenticate_password hook (a directory answers POST /api/session before local accounts), the
password_refusal hook (a policy refuses passwords before they are checked) and SettingDef.effective."""
from core.assembly.app import create_app
from core.testing import setup_admin
from core.testing.app import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.support import write_plugin

DIRECTORY = '''
from sqlalchemy import select

from core import hookimpl
from core.appdb.models import User
from core.assembly.records import PasswordCheck

SEEN = []


@hookimpl
def authenticate_password(session, username, password):
    SEEN.append(username)
    if username != "dir-user":
        return None
    if password != "directory-pass":
        return PasswordCheck("directory")
    return PasswordCheck("directory", session.scalar(select(User).where(User.email == "admin@example.com")))


@hookimpl
def track_event(event):
    SEEN.append((event.topic, event.details))
'''


def test_a_directory_answers_first_and_local_accounts_after(app_config, tmp_path, monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, DIRECTORY)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    setup_admin(app)
    module = __import__(name)
    anonymous = app.test_client()

    signed_in = anonymous.post("/api/session", json={"username": " dir-user ", "password": "directory-pass"})
    assert signed_in.status_code == 200
    me = anonymous.get("/api/user/current", headers={"X-Metabase-Session": signed_in.json["id"]}).json
    assert me["email"] == ADMIN_EMAIL

    # Known to the directory with a wrong password: refused, local accounts are not asked.
    wrong = anonymous.post("/api/session", json={"username": "dir-user", "password": ADMIN_PASSWORD})
    assert wrong.status_code == 401 and wrong.json["errors"] == {"password": "did not match stored password"}

    # Unknown to the directory: the local account signs in, and the hook saw the username as typed.
    local = anonymous.post("/api/session", json={"username": ADMIN_EMAIL.upper(), "password": ADMIN_PASSWORD})
    assert local.status_code == 200
    assert "dir-user" in module.SEEN and ADMIN_EMAIL.upper() in module.SEEN
    assert [e for e in module.SEEN if isinstance(e, tuple) and e[0] == "user-login"][-2:] == [
        ("user-login", {"method": "directory"}), ("user-login", {"method": "password"})]
    app.extensions["tessera"].db.dispose()


POLICY = '''
from core import SettingDef, hookimpl
from core.assembly.records import PasswordRefusal


@hookimpl
def password_refusal(session, email):
    return PasswordRefusal("Not with a password.") if email.lower() == "admin@example.com" else None


@hookimpl
def register_settings():
    # Read as its stored value upper-cased: the effective value, while the setting stays writable.
    return [SettingDef("shouted", default="quiet", effective=lambda session, value: value.upper())]
'''


def test_a_policy_refuses_passwords_before_they_are_checked_and_settings_read_effective(app_config, tmp_path,
                                                                                         monkeypatch):
    name = write_plugin(tmp_path, monkeypatch, POLICY)
    app = create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name})
    admin = setup_admin(app)
    anonymous = app.test_client()
    for password in (ADMIN_PASSWORD, "wrong"):
        refused = anonymous.post("/api/session", json={"username": ADMIN_EMAIL, "password": password})
        assert refused.status_code == 400 and refused.json == "Not with a password."
    forgot = anonymous.post("/api/session/forgot_password", json={"email": ADMIN_EMAIL})
    assert forgot.status_code == 400 and forgot.json == "Not with a password."
    assert anonymous.post("/api/session", json={"username": "other@example.com", "password": "x"}).status_code == 401

    assert admin.get("/api/setting/shouted").json == "QUIET"
    assert admin.put("/api/setting/shouted", json={"value": "hello"}).status_code == 204
    assert admin.get("/api/setting/shouted").json == "HELLO"
    app.extensions["tessera"].db.dispose()
