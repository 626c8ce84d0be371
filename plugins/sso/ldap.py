"""LDAP sign-in as Metabase's, with ldap3: the connection settings, testing them, and checking a login.

`check_login` answers the authenticate_password hook: the service account (`ldap-bind-dn`) finds the
person with `ldap-user-filter`, every character of the typed login escaped
(ldap3.utils.conv.escape_filter_chars), then binds as that entry with the typed password. An empty
password is refused before any bind (many servers accept an unauthenticated bind with an empty one).
A directory that cannot be reached leaves the login to local accounts, as Metabase does; a person the
directory knows with a wrong password is refused without trying them.
"""
from __future__ import annotations

import logging
import re
import ssl
from typing import Any

import ldap3
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars
from sqlalchemy.orm import Session

from core.assembly.records import PasswordCheck
from core.assembly.settings import SettingsRegistry
from core.http.errors import Invalid

from .accounts import Identity, Policy, SignInRefused, sign_in

log = logging.getLogger("tessera.sso.ldap")

SOURCE = "ldap"
DEFAULT_FILTER = "(&(objectClass=inetOrgPerson)(|(uid={login})(mail={login})))"
SECURITY = ("none", "ssl", "starttls")
TIMEOUT_SECONDS = 10
MASK = "**********"
# Never copied into login_attributes: secrets and what the account is already made of.
NOT_ATTRIBUTES = {"userpassword", "objectclass", "memberof", "sambantpassword", "sambalmpassword",
                  "unicodepwd", "krbprincipalkey"}
KEYS = ("ldap-enabled", "ldap-host", "ldap-port", "ldap-security", "ldap-bind-dn", "ldap-password",
        "ldap-user-base", "ldap-user-filter", "ldap-attribute-email", "ldap-attribute-firstname",
        "ldap-attribute-lastname", "ldap-group-sync", "ldap-group-base", "ldap-group-mappings",
        "ldap-user-provisioning-enabled")


class DirectoryError(Exception):
    """The directory could not be used: `field` names the setting to blame, for the settings form."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def valid_security(value: Any) -> str:
    if str(value).lower() not in SECURITY:
        raise Invalid({"value": "ldap-security must be none, ssl or starttls."})
    return str(value).lower()


def valid_filter(value: Any) -> str:
    if "{login}" not in str(value):
        raise Invalid({"value": "ldap-user-filter must contain {login}, where the typed login goes."})
    return str(value)


def normalise_dn(dn: str) -> str:
    return re.sub(r"\s*,\s*", ",", dn.strip().lower())


def _connection(values: dict, user: str | None, password: str | None) -> ldap3.Connection:
    """A bound connection with the settings in `values`; raises DirectoryError."""
    security = values["ldap-security"] or "none"
    tls = ldap3.Tls(validate=ssl.CERT_REQUIRED, version=ssl.PROTOCOL_TLS_CLIENT)
    server = ldap3.Server(values["ldap-host"], port=int(values["ldap-port"] or (636 if security == "ssl" else 389)),
                          use_ssl=security == "ssl", tls=tls, connect_timeout=TIMEOUT_SECONDS, get_info=ldap3.NONE)
    conn = ldap3.Connection(server, user=user, password=password, receive_timeout=TIMEOUT_SECONDS,
                            raise_exceptions=False, auto_referrals=False)
    try:
        conn.open()
        if security == "starttls" and not conn.start_tls():
            raise DirectoryError("ldap-security", "The server refused StartTLS.")
    except LDAPException as exc:
        raise DirectoryError("ldap-host", f"Could not connect to the LDAP server: {exc}") from None
    try:
        bound = conn.bind()
    except LDAPException as exc:
        raise DirectoryError("ldap-host", f"Could not connect to the LDAP server: {exc}") from None
    if not bound:
        conn.unbind()
        raise DirectoryError("ldap-password", "The LDAP server refused the bind DN or its password.")
    return conn


def test_connection(values: dict) -> None:
    """Bind as the service account and read the user search base; raises DirectoryError."""
    if not values["ldap-host"]:
        raise DirectoryError("ldap-host", "ldap-host is required.")
    if not values["ldap-user-base"]:
        raise DirectoryError("ldap-user-base", "ldap-user-base is required.")
    conn = _connection(values, values["ldap-bind-dn"], values["ldap-password"])
    try:
        if not conn.search(values["ldap-user-base"], "(objectClass=*)", search_scope=ldap3.BASE):
            raise DirectoryError("ldap-user-base", "The user search base does not exist or cannot be read.")
    finally:
        conn.unbind()


def save_settings(session: Session, registry: SettingsRegistry, changes: dict) -> None:
    """PUT /api/ldap/settings: store the changes only when the resulting settings connect (or LDAP stays
    off). A masked password (as GET /api/setting shows it) keeps the stored one."""
    unknown = sorted(set(changes) - set(KEYS))
    if unknown:
        raise Invalid({key: "Not an LDAP setting." for key in unknown})
    for key, value in changes.items():
        if key == "ldap-password" and isinstance(value, str) and value.startswith(MASK):
            continue
        registry.set(session, key, value)
    session.flush()
    values = {key: registry.get(session, key) for key in KEYS}
    if values["ldap-enabled"] or values["ldap-host"]:
        try:
            test_connection(values)
        except DirectoryError as exc:
            session.rollback()
            raise Invalid({exc.field: exc.message}, message="Unable to connect to LDAP server with current "
                          "settings") from None
    session.commit()


def check_login(session: Session, registry: SettingsRegistry, username: str, password: str) -> PasswordCheck | None:
    values = registry.get_many(session, KEYS)
    if not values["ldap-enabled"] or not values["ldap-host"]:
        return None
    if not password or not password.strip():
        return PasswordCheck(SOURCE)  # refused before any bind
    try:
        entry = _find(values, username)
        if entry is None:
            return None
        dn, attributes = entry
        if not _password_matches(values, dn, password):
            return PasswordCheck(SOURCE)
        groups = _groups(values, dn, attributes) if values["ldap-group-sync"] else None
    except DirectoryError as exc:
        log.warning("LDAP unavailable, trying local accounts: %s", exc.message)
        return None
    identity = _identity(values, attributes, groups)
    policy = Policy(create_accounts=bool(values["ldap-user-provisioning-enabled"]),
                    group_sync=bool(values["ldap-group-sync"]),
                    group_mappings={normalise_dn(k): v for k, v in (values["ldap-group-mappings"] or {}).items()})
    return PasswordCheck(SOURCE, sign_in(session, identity, policy))


def _find(values: dict, username: str) -> tuple[str, dict] | None:
    search_filter = (values["ldap-user-filter"] or DEFAULT_FILTER).replace("{login}", escape_filter_chars(username))
    conn = _connection(values, values["ldap-bind-dn"], values["ldap-password"])
    try:
        if not conn.search(values["ldap-user-base"], search_filter, search_scope=ldap3.SUBTREE,
                           attributes=[ldap3.ALL_ATTRIBUTES], size_limit=2):
            return None
        found = [e for e in conn.response if e.get("type") == "searchResEntry"]
    finally:
        conn.unbind()
    if len(found) != 1:
        if found:
            log.warning("LDAP login %r matches several entries: refused", username)
            raise SignInRefused("This login matches several directory entries: ask an administrator.")
        return None
    return found[0]["dn"], dict(found[0]["attributes"])


def _password_matches(values: dict, dn: str, password: str) -> bool:
    try:
        conn = _connection(values, dn, password)
    except DirectoryError as exc:
        if exc.field == "ldap-password":
            return False
        raise
    conn.unbind()
    return True


def _groups(values: dict, dn: str, attributes: dict) -> list[str]:
    """The DNs of the person's groups: their memberOf, and the groups under ldap-group-base naming them."""
    groups = [normalise_dn(g) for g in _as_list(attributes.get("memberOf"))]
    if values["ldap-group-base"]:
        conn = _connection(values, values["ldap-bind-dn"], values["ldap-password"])
        try:
            escaped = escape_filter_chars(dn)
            if conn.search(values["ldap-group-base"], f"(|(member={escaped})(uniqueMember={escaped}))",
                           search_scope=ldap3.SUBTREE, attributes=[]):
                groups += [normalise_dn(e["dn"]) for e in conn.response if e.get("type") == "searchResEntry"]
        finally:
            conn.unbind()
    return sorted(set(groups))


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def _first(attributes: dict, name: str) -> str | None:
    value = next((v for k, v in attributes.items() if k.lower() == name.lower()), None)
    value = _as_list(value)
    return value[0] if value and isinstance(value[0], str) and value[0].strip() else None


def _identity(values: dict, attributes: dict, groups: list[str] | None) -> Identity:
    names = [values[f"ldap-attribute-{key}"] for key in ("email", "firstname", "lastname")]
    email = _first(attributes, names[0])
    if email is None:
        raise SignInRefused(f"Your directory entry has no e-mail address (attribute {names[0]}).")
    used = {n.lower() for n in names} | NOT_ATTRIBUTES
    extra = {}
    for key, value in attributes.items():
        texts = [v for v in _as_list(value) if isinstance(v, str)]
        if key.lower() not in used and texts:
            extra[key] = texts[0] if len(texts) == 1 else texts
    return Identity(source=SOURCE, email=email, first_name=_first(attributes, names[1]),
                    last_name=_first(attributes, names[2]), groups=groups, attributes=extra)
