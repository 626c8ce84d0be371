"""Connection details encrypted at rest and masked on output (threat rows 16 and 23)."""
from __future__ import annotations

import stat

import pytest
from cryptography.fernet import Fernet

from core.driver import crypto
from drivers.sqlite import SQLiteDriver


@pytest.fixture(autouse=True)
def fresh_cache():
    crypto._cache.clear()
    yield
    crypto._cache.clear()


@pytest.mark.security_row(23)
def test_generated_key_file_is_private_and_reused(tmp_path):
    config = {"TESSERA_DATA_DIR": str(tmp_path)}
    stored = crypto.encrypt_details({"password": "hunter2", "host": "db"}, config)
    assert "hunter2" not in stored and stored.startswith(crypto.PREFIX)
    key_file = tmp_path / crypto.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    crypto._cache.clear()  # a restart reads the same key back
    assert crypto.decrypt_details(stored, config) == {"password": "hunter2", "host": "db"}


def test_configured_key_wins_and_other_keys_cannot_decrypt(tmp_path):
    one = {"TESSERA_DATA_DIR": str(tmp_path), "TESSERA_ENCRYPTION_KEY": Fernet.generate_key().decode()}
    two = {"TESSERA_DATA_DIR": str(tmp_path), "TESSERA_ENCRYPTION_KEY": "x" * 40}
    stored = crypto.encrypt_details({"password": "p"}, one)
    assert not (tmp_path / crypto.KEY_FILE).exists()
    assert crypto.decrypt_details(stored, one) == {"password": "p"}
    with pytest.raises(ValueError, match="cannot be decrypted"):
        crypto.decrypt_details(stored, two)
    with pytest.raises(ValueError):
        crypto.decrypt_details(stored[:-4] + "AAAA", one)


@pytest.mark.security_row(16)
@pytest.mark.parametrize("secret", ["CHANGE_ME_TO_A_COMPLEX_RANDOM_SECRET", "short"])
def test_weak_keys_are_refused(tmp_path, secret):
    with pytest.raises(crypto.EncryptionKeyError):
        crypto.encrypt_details({}, {"TESSERA_DATA_DIR": str(tmp_path), "TESSERA_ENCRYPTION_KEY": secret})


@pytest.mark.security_row(23)
def test_mask_and_merge():
    details = {"db": "/x.db", "password": "hunter2", "api-token": "t0k", "empty-password": ""}
    masked = crypto.mask_details(SQLiteDriver, details)
    assert masked == {"db": "/x.db", "password": crypto.MASK, "api-token": crypto.MASK, "empty-password": ""}
    merged = crypto.merge_masked(SQLiteDriver, details, {**masked, "db": "/y.db"})
    assert merged == {**details, "db": "/y.db"}
    assert crypto.merge_masked(SQLiteDriver, details, {"db": "/y.db", "password": "new"})["password"] == "new"


@pytest.mark.security_row(16)
def test_weak_configured_key_stops_startup(app_config):
    from core.assembly.app import create_app

    with pytest.raises(crypto.EncryptionKeyError):
        create_app({**app_config, "TESSERA_ENCRYPTION_KEY": "CHANGE_ME_TO_A_COMPLEX_RANDOM_SECRET"})


def test_an_instance_with_another_key_does_not_start(app_config, tmp_path):
    # Two instances on one app DB: the second has its own data directory, so its own generated key.
    from core.assembly.app import create_app
    from core.testing import setup_admin

    first = create_app(app_config)
    try:
        admin = setup_admin(first)
        files = tmp_path / "files"
        files.mkdir()
        (files / "d.db").touch()
        assert admin.post("/api/database", json={"engine": "sqlite", "name": "D",
                                                 "details": {"db": str(files / "d.db")}}).status_code == 200
    finally:
        first.extensions["tessera"].db.dispose()
    elsewhere = tmp_path / "other-machine"
    with pytest.raises(crypto.EncryptionKeyError, match="same TESSERA_ENCRYPTION_KEY"):
        create_app({**app_config, "TESSERA_DATA_DIR": str(elsewhere), "TESSERA_FILE_DB_DIRS": str(files)})
    same = create_app({**app_config, "TESSERA_DATA_DIR": str(elsewhere), "TESSERA_FILE_DB_DIRS": str(files),
                       "TESSERA_ENCRYPTION_KEY": (tmp_path / crypto.KEY_FILE).read_text().strip()})
    same.extensions["tessera"].db.dispose()
