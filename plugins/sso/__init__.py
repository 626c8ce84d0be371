"""Sign-in with the company's identity (issue 33): JWT single sign-on at /auth/sso, with accounts
created on first sign-in, group sync and login attributes (accounts.py), as Metabase's.

Disabling the plugin removes its page, its settings and with them every way in but passwords.
"""
from pathlib import Path

from core import SettingDef, hookimpl
from core.assembly.records import Migrations

from . import pages
from .accounts import check_group_mappings


@hookimpl
def register_migrations():
    return [Migrations("sso", Path(__file__).parent / "migrations")]


@hookimpl
def register_pages():
    return pages.pages()


@hookimpl
def register_settings():
    return [
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
