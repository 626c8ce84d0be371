"""/api/setting, and the instance-wide settings that belong to no single feature (site name, URL,
locale, admin e-mail). Essential: setup writes these."""
from core import SettingDef, hookimpl

from . import service
from .views import setting_api


@hookimpl
def register_routes():
    return [setting_api]


@hookimpl
def register_settings():
    return [
        SettingDef("site-name", default="Tessera", visibility="public", description="The name used for this instance."),
        SettingDef("application-name", default="Tessera", visibility="public",
                   description="The name shown in the interface."),
        SettingDef("site-url", visibility="public", validate=service.valid_site_url,
                   description="The base URL people use to reach this instance, for links in e-mails."),
        SettingDef("site-locale", default="en", visibility="public", validate=service.valid_locale,
                   description="The default language of this instance."),
        SettingDef("admin-email", visibility="authenticated", description="The e-mail address people contact for help."),
        SettingDef("anon-tracking-enabled", type="boolean", default=False, visibility="public",
                   description="Tessera never sends usage data anywhere; kept for client compatibility."),
        SettingDef("start-of-week", type="keyword", default="sunday", visibility="public",
                   validate=service.valid_weekday, description="The first day of the week."),
        SettingDef("report-timezone", visibility="admin", description="The timezone reports are run in."),
        SettingDef("report-timezone-short", visibility="public", getter=service.report_timezone_short, env=False,
                   description="Short name of the report timezone."),
    ]
