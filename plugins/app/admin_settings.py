"""The admin settings pages (Metabase's /admin/settings/<section>): general, localization, e-mail (the SMTP
settings), public sharing, embedding (its toggle and secret key), caching; and the API keys
(/admin/settings/authentication/api-keys: list, create showing the key once, regenerate, delete).

Settings are read from GET /api/setting and written one by one through PUT /api/setting/:key, so each
refusal is the API's validation message under the field's label. Only the fields that changed are sent
(a masked secret left blank keeps its value).
"""
from __future__ import annotations

import zoneinfo

from flask import request
from werkzeug.exceptions import NotFound

from core.http.internal import call

from . import render
from .admin_common import admin_page, bad_input, positive_id, reason, refused
from .render import go, read, signed_in_user
from .views import blueprint, fragment, posted

WEEKDAYS = [(day, day.capitalize()) for day in ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday",
                                                 "saturday")]
SECURITY = [("none", "None"), ("ssl", "SSL"), ("tls", "TLS"), ("starttls", "STARTTLS")]
VISIBILITY = [("all", "Everyone"), ("group", "People in the same groups"), ("none", "Nobody")]

# section slug -> (title, [(key, label, kind, help)]); kind: text, url, email, number, password, bool, or a
# list of (value, label) choices; "zones" and "locales" are lists read when drawn.
SECTIONS = {
    "general": ("General", [
        ("site-name", "Site name", "text", "Shown in the page titles and e-mails."),
        ("site-url", "Site URL", "url", "The address people reach this server at, for links in e-mails."),
        ("admin-email", "Email address for help requests", "email", ""),
        ("user-visibility", "Who people may see in lists of users", VISIBILITY, ""),
    ]),
    "localization": ("Localization", [
        ("site-locale", "Instance language", "locales", ""),
        ("report-timezone", "Report time zone", "zones", "The time zone queries run in (empty: each database's own)."),
        ("start-of-week", "First day of the week", WEEKDAYS, ""),
    ]),
    "email": ("E-mail", [
        ("email-smtp-host", "SMTP host", "text", ""),
        ("email-smtp-port", "SMTP port", "number", ""),
        ("email-smtp-security", "SMTP security", SECURITY, ""),
        ("email-smtp-username", "SMTP user name", "text", ""),
        ("email-smtp-password", "SMTP password", "password", "Leave empty to keep the password set now."),
        ("email-from-address", "From address", "email", ""),
        ("email-from-name", "From name", "text", ""),
    ]),
    "public-sharing": ("Public sharing", [
        ("enable-public-sharing", "Allow public links to questions and dashboards", "bool",
         "Anyone with such a link sees the item without signing in."),
    ]),
    "embedding-in-other-applications": ("Embedding", [
        ("enable-embedding-static", "Allow static embedding (signed with the secret key below)", "bool", ""),
    ]),
    "caching": ("Caching", [
        ("enable-query-caching", "Cache the results of slow queries", "bool", ""),
        ("query-caching-min-ttl", "Minimum query duration to cache (seconds)", "number", ""),
        ("query-caching-ttl-ratio", "Cache time-to-live multiplier", "number",
         "A result is kept this many times as long as its query took."),
        ("query-caching-max-kb", "Largest result to cache (kB)", "number", ""),
    ]),
    # Sign-in methods (plugins/sso): shown while that plugin declares their settings. Group mappings have
    # their own form (admin_group_mappings.py); Google's three settings are saved together.
    "authentication/google": ("Google Sign-In", [
        ("google-auth-client-id", "Client ID", "text",
         "The OAuth client ID from Google's console, ending in .apps.googleusercontent.com."),
        ("google-auth-enabled", "Allow signing in with Google", "bool", ""),
        ("google-auth-auto-create-accounts-domain", "Create accounts for these e-mail domains", "text",
         "Comma-separated, such as example.com. Empty: only people who already have an account sign in."),
    ]),
    "authentication/password": ("Password login", [
        ("enable-password-login", "Allow signing in with an e-mail address and password", "bool",
         "Turning this off takes effect only while a single sign-on method is on. The administrator named by "
         "TESSERA_BREAK_GLASS_ADMIN keeps their password."),
    ]),
    "authentication/jwt": ("JWT single sign-on", [
        ("jwt-enabled", "Allow signing in with JWT single sign-on", "bool", ""),
        ("jwt-identity-provider-uri", "Identity provider URI", "url", "Where the Sign in with SSO button sends people."),
        ("jwt-shared-secret", "Shared secret (HS256)", "password", "Leave empty to keep the secret set now."),
        ("jwt-attribute-email", "E-mail claim", "text", ""),
        ("jwt-attribute-firstname", "First name claim", "text", ""),
        ("jwt-attribute-lastname", "Last name claim", "text", ""),
        ("jwt-attribute-groups", "Groups claim", "text", ""),
        ("jwt-group-sync", "Sync the mapped groups at each sign-in", "bool", ""),
        ("jwt-user-provisioning-enabled", "Create an account at a first sign-in", "bool", ""),
    ]),
    "authentication/ldap": ("LDAP", [
        ("ldap-enabled", "Check logins against the LDAP directory", "bool", ""),
        ("ldap-host", "LDAP host", "text", ""),
        ("ldap-port", "LDAP port", "number", ""),
        ("ldap-security", "Security", [("none", "None"), ("ssl", "SSL"), ("starttls", "StartTLS")], ""),
        ("ldap-bind-dn", "Bind DN (the service account)", "text", ""),
        ("ldap-password", "Bind password", "password", "Leave empty to keep the password set now."),
        ("ldap-user-base", "User search base", "text", ""),
        ("ldap-user-filter", "User filter", "text", "{login} is replaced by the typed login, escaped."),
        ("ldap-attribute-email", "E-mail attribute", "text", ""),
        ("ldap-attribute-firstname", "First name attribute", "text", ""),
        ("ldap-attribute-lastname", "Last name attribute", "text", ""),
        ("ldap-group-sync", "Sync the mapped groups at each login", "bool", ""),
        ("ldap-group-base", "Group search base", "text", ""),
        ("ldap-user-provisioning-enabled", "Create an account at a first login", "bool", ""),
    ]),
    # Listed here; added, edited and removed by admin_oidc.py's form: the providers are one JSON setting
    # (PUT /api/setting/oidc-providers or the environment's TESSERA_OIDC_PROVIDERS); no page receives a secret.
    "authentication/oidc": ("OpenID Connect", [("oidc-providers", "Providers", "providers", "")]),
}


def settings_by_key() -> dict:
    return {row["key"]: row for row in read("/api/setting")}


def choices(kind) -> list | None:
    if kind == "zones":
        return [("", "Each database's own")] + [(zone, zone) for zone in sorted(zoneinfo.available_timezones())]
    if kind == "locales":
        locales = render.properties().get("available-locales") or []
        return [(code, name) for code, name in locales] or [("en", "English")]
    return kind if isinstance(kind, list) else None


@blueprint.get("/admin/settings")
def admin_settings_home():
    signed_in_user()
    return go("/admin/settings/general")


def admin_settings_section(section: str):
    user = signed_in_user()
    values = settings_by_key()
    title, spec = SECTIONS[section]
    if not any(key in values for key, *_ in spec):
        raise NotFound()  # the plugin declaring this section's settings is disabled
    fields = [{"key": key, "label": label, "kind": kind if not choices(kind) else "choice", "choices": choices(kind),
               "help": help_text, "value": (values.get(key) or {}).get("value"),
               "env": (values.get(key) or {}).get("is_env_setting"), "default": (values.get(key) or {}).get("default")}
              for key, label, kind, help_text in spec if key in values]
    providers = oidc_providers(values) if section == "authentication/oidc" else None
    fields = [f for f in fields if f["kind"] != "providers"]
    secret = None
    if section == "embedding-in-other-applications":
        answer = call("GET", "/api/setting/embedding-secret-key")
        secret = answer.body if answer.ok else None
    return admin_page("app/admin/settings.html", section="settings", user=user, title=f"Settings: {title}",
                      fields=fields, slug=section, sections=[(slug, t) for slug, (t, keys) in SECTIONS.items()
                                                             if any(key in values for key, *_ in keys)],
                      secret=secret, providers=providers)


def oidc_providers(values: dict) -> dict:
    """The OpenID Connect providers as the section lists them, without their client secrets."""
    row = values.get("oidc-providers") or {}
    answer = call("GET", "/api/setting/oidc-providers")
    listed = answer.body if answer.ok and isinstance(answer.body, list) else []
    site = str((values.get("site-url") or {}).get("value") or request.host_url).rstrip("/")
    keep = ("name", "display_name", "issuer", "discovery_url", "client_id", "scopes", "allowed_email_domains",
            "auto_create_accounts", "group_mappings")
    items = [{**{key: item.get(key) for key in keep}, "secret_set": bool(item.get("client_secret")),
              "redirect_uri": f"{site}/auth/sso/{item.get('name')}/callback"}
             for item in listed if isinstance(item, dict)]
    return {"items": items, "env": bool(row.get("is_env_setting")), "env_name": row.get("env_name")}


def wanted_value(field_kind, raw, checked: bool):
    if field_kind == "bool":
        return checked
    text = raw.strip() if isinstance(raw, str) else raw
    return None if text in ("", None) else text


def admin_settings_submit(section: str):
    signed_in_user()
    body = posted()
    if section == "email":
        return email_submit(body)
    if section == "authentication/ldap":
        return ldap_submit(body)
    if section == "authentication/google":
        return google_submit(body)
    current = call("GET", "/api/setting")
    if not current.ok:
        return refused(current)
    values = {row["key"]: row for row in current.body}
    saved = []
    for key, label, kind, _ in SECTIONS[section][1]:
        if key not in values or values[key].get("is_env_setting"):
            continue
        if kind != "bool" and key not in body:
            continue  # a field the form did not send (an unticked box is the only one left out on purpose)
        new = wanted_value(kind, body.get(key), bool(body.get(key)))
        if kind == "password" and new is None:
            continue  # the page never shows a secret: empty keeps it
        old = values[key].get("value")
        if new == old or (isinstance(old, (int, float)) and not isinstance(old, bool) and str(new) == str(old)):
            continue
        answer = call("PUT", f"/api/setting/{key}", json={"value": new})
        if not answer.ok:
            done = f" ({', '.join(saved)} saved)" if saved else ""
            return fragment("app/_form_error.html", status=answer.status, message=f"{label}: {reason(answer)}{done}")
        saved.append(label)
    return fragment("app/_form_done.html", message="Saved." if saved else "Nothing was changed.")


def email_submit(body: dict):
    """The SMTP settings in one PUT /api/email, which tries the server with them before storing them."""
    sent = {key: (body.get(key) or "").strip() or None if isinstance(body.get(key), str) else body.get(key)
            for key, _, kind, _ in SECTIONS["email"][1] if key in body}
    if not sent.get("email-smtp-password"):
        sent.pop("email-smtp-password", None)  # empty keeps the stored password
    answer = call("PUT", "/api/email", json=sent)
    if not answer.ok:
        body = answer.body if isinstance(answer.body, dict) else {}
        return fragment("app/_form_error.html", status=answer.status, message=body.get("message") or reason(answer))
    return fragment("app/_form_done.html", message="Saved: the SMTP server accepted these settings.")


def ldap_submit(body: dict):
    """The LDAP settings in one PUT /api/ldap/settings, which connects with them before storing them."""
    sent = {}
    for key, _, kind, _ in SECTIONS["authentication/ldap"][1]:
        if kind == "bool":
            sent[key] = bool(body.get(key))
        elif key in body:
            sent[key] = wanted_value(kind, body.get(key), False)
    if not sent.get("ldap-password"):
        sent.pop("ldap-password", None)  # empty keeps the stored password
    answer = call("PUT", "/api/ldap/settings", json=sent)
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=reason(answer))
    return fragment("app/_form_done.html", message="Saved: the LDAP server accepted these settings.")


def google_submit(body: dict):
    """Google's settings in one PUT /api/google/settings, as Metabase's form sends them."""
    sent = {key: bool(body.get(key)) if kind == "bool" else wanted_value(kind, body.get(key), False)
            for key, _, kind, _ in SECTIONS["authentication/google"][1]}
    answer = call("PUT", "/api/google/settings", json=sent)
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=reason(answer))
    return fragment("app/_form_done.html", message="Saved.")


@blueprint.post("/admin/settings/email/test")
def admin_email_test():
    signed_in_user()
    posted()
    answer = call("POST", "/api/email/test")
    if not answer.ok:
        return refused(answer)
    me = call("GET", "/api/user/current")
    return fragment("app/_form_done.html", message=f"A test e-mail was sent to {me.body.get('email') if me.ok else 'you'}.")


@blueprint.post("/admin/settings/email/clear")
def admin_email_clear():
    signed_in_user()
    posted()
    answer = call("DELETE", "/api/email")
    return refused(answer) if not answer.ok else go("/admin/settings/email")


# One route per section, so that an unknown section is the app's 404 like any unknown page.
for _slug in SECTIONS:
    blueprint.add_url_rule(f"/admin/settings/{_slug}", f"admin_settings_{_slug}", admin_settings_section,
                           defaults={"section": _slug}, methods=["GET"])
    blueprint.add_url_rule(f"/admin/settings/{_slug}", f"admin_settings_{_slug}_save", admin_settings_submit,
                           defaults={"section": _slug}, methods=["POST"])


@blueprint.post("/admin/settings/embedding-in-other-applications/secret")
def admin_new_embedding_secret():
    signed_in_user()
    posted()
    token = call("GET", "/api/util/random_token")
    if not token.ok:
        return refused(token)
    value = token.body.get("token") if isinstance(token.body, dict) else token.body
    answer = call("PUT", "/api/setting/embedding-secret-key", json={"value": value})
    return refused(answer) if not answer.ok else go("/admin/settings/embedding-in-other-applications")


# -- API keys ------------------------------------------------------------------------------------------

KEYS = "/admin/settings/authentication/api-keys"


@blueprint.get(KEYS)
def admin_api_keys():
    user = signed_in_user()
    keys = read("/api/api-key")
    groups = read("/api/permissions/group")
    return admin_page("app/admin/api_keys.html", section="api-keys", user=user, title="API keys", keys=keys,
                      groups=groups)


@blueprint.post(KEYS)
def admin_create_api_key():
    signed_in_user()
    body = posted()
    group_id = positive_id(body.get("group_id"))
    if group_id is None:
        return bad_input("Choose the group whose permissions the key has.")
    answer = call("POST", "/api/api-key", json={"name": (body.get("name") or "").strip(), "group_id": group_id})
    if not answer.ok:
        return refused(answer)
    return fragment("app/admin/_api_key.html", key=answer.body, created=True)


@blueprint.post(f"{KEYS}/<int:key_id>/regenerate")
def admin_regenerate_api_key(key_id: int):
    signed_in_user()
    posted()
    answer = call("PUT", f"/api/api-key/{key_id}/regenerate")
    return refused(answer) if not answer.ok else fragment("app/admin/_api_key.html", key=answer.body, created=False)


@blueprint.post(f"{KEYS}/<int:key_id>/delete")
def admin_delete_api_key(key_id: int):
    signed_in_user()
    posted()
    answer = call("DELETE", f"/api/api-key/{key_id}")
    return refused(answer) if not answer.ok else go(KEYS)
