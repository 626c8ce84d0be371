"""The OpenID Connect provider form of the admin settings (plugins/sso's `oidc-providers` setting, a JSON
list): add a provider, edit one, remove one, at /admin/settings/authentication/oidc/provider[?name=NAME]
(the list itself is the settings section /admin/settings/authentication/oidc, admin_settings.py).

Every save is the whole list in one PUT /api/setting/oidc-providers, so the setting's own validation is
the form's 400 message. The client secret never reaches the browser: its field is always empty, and an
empty field keeps the stored secret. Group mappings are the rows of the group-mappings form
(admin_group_mappings.py), redrawn by htmx without saving. While TESSERA_OIDC_PROVIDERS sets the list the
form is read-only and every write is refused.
"""
from __future__ import annotations

from flask import request
from werkzeug.exceptions import NotFound

from core.http.internal import call

from .admin_common import admin_page, reason
from .admin_group_mappings import mappable_groups, mapped_twice, posted_rows, rows_of
from .admin_settings import settings_by_key
from .render import Failed, go, signed_in_user
from .views import blueprint, fragment, posted

KEY = "oidc-providers"
LIST = "/admin/settings/authentication/oidc"
FORM = f"{LIST}/provider"
CLAIMS = (("email", "email"), ("first_name", "given_name"), ("last_name", "family_name"), ("groups", "groups"))
TEXTS = ("name", "display_name", "issuer", "discovery_url", "client_id")


def _state() -> tuple[list[dict], dict]:
    """The providers as stored (with their secrets: never handed to a template) and the setting's row."""
    row = settings_by_key().get(KEY)
    if row is None:
        raise NotFound()  # plugins/sso is disabled
    answer = call("GET", f"/api/setting/{KEY}")
    if not answer.ok:
        raise Failed(answer)
    listed = answer.body if isinstance(answer.body, list) else []
    return [item for item in listed if isinstance(item, dict)], row


def _find(providers: list[dict], name) -> int | None:
    return next((i for i, item in enumerate(providers) if item.get("name") == name), None)


def _text(body: dict, key: str) -> str:
    value = body.get(key)
    return value.strip() if isinstance(value, str) else ""


def provider_from(body: dict, stored: dict | None) -> dict:
    """The provider a posted form describes; the stored secret stays unless a new one is typed or it is cleared."""
    item: dict = {}
    for key in TEXTS:
        if _text(body, key) or key in ("name", "client_id"):
            item[key] = _text(body, key)
    secret = body.get("client_secret") if isinstance(body.get("client_secret"), str) else ""
    if secret.strip() and not body.get("clear_secret"):
        item["client_secret"] = secret.strip()
    elif stored and stored.get("client_secret") and not body.get("clear_secret"):
        item["client_secret"] = stored["client_secret"]
    scopes = _text(body, "scopes").replace(",", " ").split()
    if scopes:
        item["scopes"] = scopes
    claims = {key: _text(body, f"claim_{key}") for key, _ in CLAIMS if _text(body, f"claim_{key}")}
    if claims:
        item["claims"] = claims
    item["allowed_email_domains"] = [d.strip() for d in _text(body, "allowed_email_domains").split(",") if d.strip()]
    item["auto_create_accounts"] = bool(body.get("auto_create_accounts"))
    item["group_sync"] = bool(body.get("group_sync"))
    item["group_mappings"] = {r["name"]: r["groups"] for r in posted_rows(body) if r["name"]}
    return item


def _shown(item: dict) -> dict:
    """What the form draws of a provider: every field but the secret, of which only whether it is set."""
    claims = item.get("claims") if isinstance(item.get("claims"), dict) else {}
    scopes = item.get("scopes") if isinstance(item.get("scopes"), list) else ["openid", "email", "profile"]
    return {**{key: item.get(key) or "" for key in TEXTS}, "secret_set": bool(item.get("client_secret")),
            "scopes": " ".join(str(s) for s in scopes),
            "claims": [(key, default, claims.get(key) or "") for key, default in CLAIMS],
            "allowed_email_domains": ", ".join(str(d) for d in item.get("allowed_email_domains") or []),
            "auto_create_accounts": bool(item.get("auto_create_accounts")),
            "group_sync": item.get("group_sync", True) is not False}


def _form(provider: dict, original: str, env: bool, rows: list[dict], status: int = 200, error: str | None = None):
    return fragment("app/admin/_oidc_provider_form.html", status=status, p=_shown(provider), original=original,
                    env=env, rows=rows, groups=mappable_groups(), error=error, post=FORM, target="#oidc-provider",
                    label="Value in the groups claim")


@blueprint.get(FORM)
def admin_oidc_provider():
    user = signed_in_user()
    providers, row = _state()
    name = request.args.get("name")
    index = _find(providers, name) if name else None
    if name and index is None:
        raise NotFound()
    provider = providers[index] if index is not None else {}
    title = f"OpenID Connect: {provider.get('display_name') or name}" if name else "OpenID Connect: add a provider"
    return admin_page("app/admin/oidc_provider.html", section="settings", user=user, title=title,
                      p=_shown(provider), original=name or "", env=bool(row.get("is_env_setting")),
                      env_name=row.get("env_name"), rows=rows_of(provider.get("group_mappings")),
                      groups=mappable_groups(), error=None, post=FORM, target="#oidc-provider",
                      label="Value in the groups claim")


@blueprint.post(FORM)
def admin_oidc_provider_save():
    signed_in_user()
    providers, row = _state()
    body = posted()
    original = _text(body, "original")
    index = _find(providers, original) if original else None
    env = bool(row.get("is_env_setting"))
    rows = posted_rows(body)
    action = str(body.get("action") or "save")
    provider = provider_from(body, providers[index] if index is not None else None)
    if action == "add":
        return _form(provider, original, env, rows + [{"name": "", "groups": []}])
    if action.startswith("remove:") and action[7:].isdigit():
        return _form(provider, original, env, [r for i, r in enumerate(rows) if i != int(action[7:])])
    if env:
        return _form(provider, original, env, rows, 400, error="The providers are set by the environment.")
    if original and index is None:
        return _form(provider, original, env, rows, 404, error=f"The provider {original} no longer exists.")
    twice = mapped_twice([r for r in rows if r["name"]])
    if twice:
        return _form(provider, original, env, rows, 400, error=twice)
    saved = [provider if i == index else item for i, item in enumerate(providers)]
    answer = call("PUT", f"/api/setting/{KEY}", json={"value": saved if index is not None else saved + [provider]})
    if not answer.ok:
        return _form(provider, original, env, rows, answer.status if answer.status >= 400 else 400,
                     error=reason(answer))
    return go(LIST)


@blueprint.post(f"{FORM}/remove")
def admin_oidc_provider_remove():
    signed_in_user()
    providers, row = _state()
    name = _text(posted(), "name")
    index = _find(providers, name) if name else None
    if row.get("is_env_setting"):
        return fragment("app/_form_error.html", status=400, message="The providers are set by the environment.")
    if index is None:
        return fragment("app/_form_error.html", status=404, message="There is no such provider.")
    answer = call("PUT", f"/api/setting/{KEY}", json={"value": providers[:index] + providers[index + 1:]})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 400,
                        message=reason(answer))
    return go(LIST)
