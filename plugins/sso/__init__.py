"""Sign-in with the company's identity (issue 33), as Metabase's: JWT single sign-on at /auth/sso
(jwt_sso.py, pages.py), LDAP for POST /api/session (ldap.py, through the authenticate_password hook) and
Google Sign-In (google.py, google_views.py, and google_pages.py for the login page's button), OpenID
Connect at /auth/sso/NAME (oidc.py, oidc_views.py, oidc_settings.py, id_tokens.py), with accounts created
on first sign-in, group sync and login attributes (accounts.py); and `enable-password-login` with its
break-glass administrator (password_policy.py, through the password_refusal hook).

Disabling the plugin removes its page, its settings and with them every way in but passwords.
"""
from pathlib import Path

from core import SettingDef, hookimpl
from core.assembly.records import Migrations

from . import (
    google,
    google_pages,
    ldap,
    oidc_settings,
    oidc_views,  # noqa: F401  (its routes are on the /auth/sso blueprint of pages.py)
    pages,
    password_policy,
)
from .accounts import check_group_mappings
from .google_views import google_api, google_auth_api
from .views import ldap_api


@hookimpl
def register_migrations():
    return [Migrations("sso", Path(__file__).parent / "migrations")]


@hookimpl
def register_pages():
    return [*pages.pages(), *google_pages.pages()]


@hookimpl
def register_routes():
    return [ldap_api, google_api, google_auth_api]


@hookimpl
def authenticate_password(session, username, password):
    from flask import current_app

    return ldap.check_login(session, current_app.extensions["tessera"].settings, username, password)


@hookimpl
def register_settings():
    return [*JWT_SETTINGS, *LDAP_SETTINGS, *google.SETTINGS, *oidc_settings.SETTINGS, PASSWORD_LOGIN]


@hookimpl
def password_refusal(session, email):
    return password_policy.refusal(session, email)


PASSWORD_LOGIN = SettingDef(
    password_policy.SETTING, type="boolean", visibility="public", default=True, effective=password_policy.effective,
    description="Allow logging in by email and password (only turned off while a single sign-on method is "
                "enabled; the TESSERA_BREAK_GLASS_ADMIN administrator keeps their password).")


JWT_SETTINGS = [
    SettingDef("jwt-enabled", type="boolean", default=False, visibility="public",
               description="Allow signing in with JWT single sign-on (/auth/sso)."),
    SettingDef("jwt-identity-provider-uri", description="Where /auth/sso sends a person to sign in: the "
               "identity provider's JWT endpoint."),
    SettingDef("jwt-shared-secret", sensitive=True,
               description="The secret the identity provider signs its tokens with (HS256)."),
    SettingDef("jwt-attribute-email", default="email", description="The claim holding the e-mail address."),
    SettingDef("jwt-attribute-firstname", default="first_name", description="The claim holding the first name."),
    SettingDef("jwt-attribute-lastname", default="last_name", description="The claim holding the last name."),
    SettingDef("jwt-attribute-groups", default="groups", description="The claim holding the group names."),
    SettingDef("jwt-group-sync", type="boolean", default=False,
               description="Set memberships of the mapped groups from the groups claim at each sign-in."),
    SettingDef("jwt-group-mappings", type="json", default={}, validate=check_group_mappings,
               description="Group names from the identity provider mapped to lists of group ids."),
    SettingDef("jwt-user-provisioning-enabled", type="boolean", default=True,
               description="Create an account at the first JWT sign-in of an unknown e-mail address."),
]

LDAP_SETTINGS = [
    SettingDef("ldap-enabled", type="boolean", default=False, visibility="public",
               description="Check logins against the LDAP directory before local accounts."),
    SettingDef("ldap-host", description="Host name of the LDAP server."),
    SettingDef("ldap-port", type="integer", default=389, description="Port of the LDAP server."),
    SettingDef("ldap-security", type="keyword", default="none", validate=ldap.valid_security,
               description="none, ssl (LDAPS) or starttls."),
    SettingDef("ldap-bind-dn", description="The service account that searches for people."),
    SettingDef("ldap-password", sensitive=True, description="The service account's password."),
    SettingDef("ldap-user-base", description="Where people are searched (a DN)."),
    SettingDef("ldap-user-filter", default=ldap.DEFAULT_FILTER, validate=ldap.valid_filter,
               description="The filter that finds a person; {login} is the typed login, escaped."),
    SettingDef("ldap-attribute-email", default="mail", description="The attribute holding the e-mail address."),
    SettingDef("ldap-attribute-firstname", default="givenName", description="The attribute holding the first name."),
    SettingDef("ldap-attribute-lastname", default="sn", description="The attribute holding the last name."),
    SettingDef("ldap-group-sync", type="boolean", default=False,
               description="Set memberships of the mapped groups from the directory's groups at each login."),
    SettingDef("ldap-group-base", description="Where groups naming a person as member are searched (a DN)."),
    SettingDef("ldap-group-mappings", type="json", default={}, validate=check_group_mappings,
               description="Directory group DNs mapped to lists of group ids."),
    SettingDef("ldap-user-provisioning-enabled", type="boolean", default=True,
               description="Create an account at the first LDAP login of a person the directory knows."),
]
