"""The OpenID Connect providers: the `oidc-providers` setting (a JSON list; TESSERA_OIDC_PROVIDERS holds
the same list in the environment, and then wins, read-only, as for every setting), read into `Provider`
records, and the public list of their names and labels the login page draws a button for.

A provider that is misconfigured is refused as a whole with a message naming the field, when it is saved
through the API and when someone signs in with it; the login page then leaves its button out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core import SettingDef
from core.http.errors import Invalid

KEY = "oidc-providers"
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
DISCOVERY_PATH = "/.well-known/openid-configuration"


class _Claims(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str = "email"
    first_name: str = "given_name"
    last_name: str = "family_name"
    groups: str = "groups"


class _Provider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    display_name: str | None = None
    issuer: str | None = None
    discovery_url: str | None = None
    client_id: str = Field(min_length=1)
    client_secret: str | None = None
    scopes: list[str] = ["openid", "email", "profile"]
    claims: _Claims = _Claims()
    allowed_email_domains: list[str] = []
    auto_create_accounts: bool = False
    group_sync: bool = True
    group_mappings: dict[str, list[int]] = {}

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.fullmatch(value):
            raise ValueError("must be 1 to 40 lower-case letters, digits, - or _, starting with a letter or digit "
                             "(it is part of the sign-in address /auth/sso/NAME)")
        return value

    @field_validator("issuer", "discovery_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^/\s]+", value):
            raise ValueError("must be an http or https URL")
        return value


@dataclass(frozen=True)
class Provider:
    name: str
    display_name: str
    issuer: str | None  # None: the discovery document's own `issuer`
    discovery_url: str
    client_id: str
    client_secret: str | None
    scopes: tuple[str, ...]
    email_claim: str
    first_name_claim: str
    last_name_claim: str
    groups_claim: str
    allowed_email_domains: tuple[str, ...]
    auto_create_accounts: bool
    group_sync: bool
    group_mappings: dict[str, list[int]]


def _problem(error: ValidationError, index: int) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "provider"
    return f"OpenID Connect provider {index + 1}: {where}: {first['msg']}."


def parse(value: Any) -> list[Provider]:
    """The providers of a setting value; raises Invalid naming the first problem."""
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise Invalid({"value": "oidc-providers must be a JSON list of providers."})
    providers: list[Provider] = []
    for index, item in enumerate(value):
        try:
            model = _Provider.model_validate(item)
        except ValidationError as exc:
            raise Invalid({"value": _problem(exc, index)}) from None
        if not model.issuer and not model.discovery_url:
            raise Invalid({"value": f"OpenID Connect provider {model.name!r} needs an issuer or a discovery_url."})
        if any(p.name == model.name for p in providers):
            raise Invalid({"value": f"Two OpenID Connect providers are named {model.name!r}."})
        scopes = tuple(dict.fromkeys(["openid", *model.scopes]))
        providers.append(Provider(
            name=model.name, display_name=model.display_name or model.name, issuer=model.issuer,
            discovery_url=model.discovery_url or model.issuer.rstrip("/") + DISCOVERY_PATH,
            client_id=model.client_id, client_secret=model.client_secret or None, scopes=scopes,
            email_claim=model.claims.email, first_name_claim=model.claims.first_name,
            last_name_claim=model.claims.last_name, groups_claim=model.claims.groups,
            allowed_email_domains=tuple(d.strip().lower().lstrip("@") for d in model.allowed_email_domains if d.strip()),
            auto_create_accounts=model.auto_create_accounts, group_sync=model.group_sync,
            group_mappings=model.group_mappings))
    return providers


def check(value: Any) -> Any:
    parse(value)
    return value


def configured(session) -> list[Provider]:
    """The providers in force; raises Invalid when the configuration is wrong."""
    from flask import current_app

    return parse(current_app.extensions["tessera"].settings.get(session, KEY))


def _buttons(session) -> list[dict]:
    try:
        return [{"name": p.name, "display_name": p.display_name} for p in configured(session)]
    except Invalid:
        return []  # the administrator's list shows the problem; the login page draws no broken button


SETTINGS = [
    SettingDef(KEY, type="json", default=[], sensitive=True, validate=check,
               description="OpenID Connect providers, a JSON list (see docs/openid-connect.md); the client secrets are "
                           "never shown back. TESSERA_OIDC_PROVIDERS sets the same list from the environment."),
    SettingDef("oidc-sign-in-providers", type="json", visibility="public", env=False, getter=_buttons,
               description="The OpenID Connect providers people may sign in with: name and label, for the "
                           "login page's buttons (read-only)."),
]
