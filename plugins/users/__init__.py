"""/api/user: the users of this instance. Owns the user-visibility setting."""
from core import SettingDef, hookimpl
from core.http.errors import Invalid

from .views import user_api

VISIBILITY = ("all", "group", "none")


def _visibility(value):
    if str(value).lower() not in VISIBILITY:
        raise Invalid({"value": "Invalid value for user-visibility: use all, group or none."})
    return str(value).lower()


@hookimpl
def register_routes():
    return [user_api]


@hookimpl
def register_settings():
    return [
        SettingDef("user-visibility", type="keyword", default="all", visibility="authenticated",
                   validate=_visibility,
                   description="Whom people see when picking recipients: all users, their groups' members, or none."),
    ]
