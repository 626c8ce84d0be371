"""Connection details at rest and on the wire: encrypted in the app DB, secrets masked in responses.

The key is TESSERA_ENCRYPTION_KEY when set (a Fernet key, or any secret of 32+ characters, which is
stretched with HKDF); otherwise one is generated with `secrets` into TESSERA_DATA_DIR/encryption.key
(mode 0600) the first time it is needed. Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`)
authenticates as well as encrypts, so a tampered row fails loudly instead of decrypting to garbage.
"""
from __future__ import annotations

import base64
import os
import threading
from pathlib import Path

import orjson
from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MASK = "**MetabasePass**"
PREFIX = "fernet:"
KEY_FILE = "encryption.key"

# Secrets copied from sample configs are as good as none (Superset CVE-2023-27524).
KNOWN_DEFAULTS = frozenset({
    "CHANGE_ME_TO_A_COMPLEX_RANDOM_SECRET", "thisISaSECRET_1234", "YOUR_OWN_RANDOM_GENERATED_SECRET_KEY",
    "TEST_NON_DEV_SECRET", "\\2\\1thisismyscretkey\\1\\2\\e\\y\\y\\h", "changeme", "secret",
})
# Key names that are secret whatever the driver says (a third-party Details model may forget).
SECRET_NAMES = ("password", "pass", "secret", "token", "private-key", "private_key", "api-key", "api_key")

_lock = threading.Lock()
_cache: dict[tuple[str, str], Fernet] = {}
# (key, stored text) -> the decrypted JSON: a list of databases or a query decrypts the same details on
# every request, and a Fernet decryption costs more than the rest of such a read. Bounded; the same
# text under the same key always decrypts to the same details.
_plain: dict[tuple[Fernet, str], bytes] = {}
_PLAIN_LIMIT = 1024


class EncryptionKeyError(RuntimeError):
    """TESSERA_ENCRYPTION_KEY is unusable (a known default or too short): refuse to run with it."""


def _config() -> dict:
    from flask import current_app, has_app_context

    if has_app_context():
        return current_app.config
    from core.assembly.config import load_config

    return load_config()


def fernet_for(secret: str) -> Fernet:
    """The Fernet of a configured secret: used as is when it is a Fernet key, else stretched."""
    if secret in KNOWN_DEFAULTS or len(secret) < 32:
        raise EncryptionKeyError("TESSERA_ENCRYPTION_KEY must be a random secret of at least 32 characters")
    try:
        if len(base64.urlsafe_b64decode(secret.encode())) == 32:
            return Fernet(secret.encode())
    except (ValueError, TypeError):
        pass
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"tessera-details", info=b"fernet").derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def check_key(config: dict) -> None:
    """Refuse to start with a configured key that is a known default or too short (threat row 16)."""
    secret = config.get("TESSERA_ENCRYPTION_KEY")
    if secret:
        fernet_for(secret)


def _generated_key(data_dir: Path) -> str:
    path = data_dir / KEY_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another worker won the race: use its key
        return path.read_text().strip()
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key.decode()


def current_fernet(config: dict | None = None) -> Fernet:
    config = config if config is not None else _config()
    secret = config.get("TESSERA_ENCRYPTION_KEY")
    source = ("env", secret) if secret else ("file", str(config["TESSERA_DATA_DIR"]))
    with _lock:
        if source not in _cache:
            _cache[source] = fernet_for(secret) if secret else Fernet(_generated_key(Path(source[1])).encode())
        return _cache[source]


def check_stored_details(session, config: dict) -> None:
    """Refuse to start when the app DB's connection details do not decrypt with this process's key.

    Every instance on one app DB must use the same key: a key generated into one instance's
    TESSERA_DATA_DIR is unknown to the others, whose every query would then fail. The newest
    database's details are tried (all are written with the one key); no database, nothing to check."""
    from sqlalchemy import select

    from core.appdb.models import Database

    stored = session.scalar(select(Database.details).where(Database.details.startswith(PREFIX))
                            .order_by(Database.id.desc()).limit(1))
    if stored is None:
        return
    try:
        current_fernet(config).decrypt(stored[len(PREFIX):].encode())
    except InvalidToken:
        source = ("TESSERA_ENCRYPTION_KEY" if config.get("TESSERA_ENCRYPTION_KEY")
                  else f"the key generated into {Path(str(config['TESSERA_DATA_DIR'])) / KEY_FILE}")
        raise EncryptionKeyError(
            f"The app DB's connection details cannot be decrypted with {source}: every instance on one app DB "
            "needs the same TESSERA_ENCRYPTION_KEY (the key they were written with).") from None


def encrypt_details(details: dict, config: dict | None = None) -> str:
    return PREFIX + current_fernet(config).encrypt(orjson.dumps(details)).decode()


def decrypt_details(stored: str, config: dict | None = None) -> dict:
    if not stored:
        return {}
    if not stored.startswith(PREFIX):
        raise ValueError("connection details are not encrypted with a Tessera key")
    fernet = current_fernet(config)
    plain = _plain.get((fernet, stored))
    if plain is None:
        try:
            plain = fernet.decrypt(stored[len(PREFIX):].encode())
        except InvalidToken as exc:
            raise ValueError("connection details cannot be decrypted with the configured key") from exc
        if len(_plain) >= _PLAIN_LIMIT:
            _plain.clear()
        _plain[(fernet, stored)] = plain
    return orjson.loads(plain)  # a new dict each time: callers may change theirs


def _secret_keys(driver, details: dict) -> set[str]:
    keys = set()
    model = getattr(driver, "Details", None)
    if model is not None:
        import typing

        from pydantic import SecretStr

        for name, info in model.model_fields.items():
            if SecretStr in (typing.get_args(info.annotation) or (info.annotation,)):
                keys.add(info.alias or name)
    keys.update(k for k in details if any(s in k.lower() for s in SECRET_NAMES))
    return keys


def mask_details(driver, details: dict) -> dict:
    """The details as a response shows them: every secret that is set replaced by the mask."""
    secrets_ = _secret_keys(driver, details)
    return {k: (MASK if k in secrets_ and v not in (None, "") else v) for k, v in details.items()}


def merge_masked(driver, old: dict, new: dict) -> dict:
    """New details from a PUT: a secret still carrying the mask keeps its stored value."""
    secrets_ = _secret_keys(driver, {**old, **new})
    merged = dict(new)
    for key in secrets_:
        if merged.get(key) == MASK:
            if key in old:
                merged[key] = old[key]
            else:
                merged.pop(key)
    return merged
