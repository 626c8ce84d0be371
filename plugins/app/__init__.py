"""The web app: the pages people use in a browser (setup, sign-in, home, collections, search, and the
rest as they are built), server-rendered with Jinja2 and made interactive with htmx (vendored in
static/, with its licence; no CDN, no Node at run time).

Every page reads and writes through the API as its signed-in user (core.http.internal), so it shows
nothing that user could not read through the API and every permission decision is the API's. Other
plugins add navigation links (`app_nav_links`), HTML under a page's heading (`app_page_slot`) and
templates that replace the app's by name (`register_templates`). Disabled, `/` is the API's landing
page again and every app URL is 404.
"""
from core import Pages, hookimpl

from . import (  # noqa: F401 - their routes join the blueprint
    account,
    admin,
    admin_databases,
    admin_datamodel,
    admin_datamodel_fields,
    admin_group_mappings,
    admin_oidc,
    alerts,
    bookmarks,
    browse,
    collection_permissions,
    collections_edit,
    collections_edit_items,
    dashboard,
    dashboard_edit,
    drill_menu,
    expressions_views,
    native_editor,
    notebook,
    question,
    save,
    save_metadata,
    setup_data,
    sharing,
    subscriptions,
)
from .sharing_preview import PREVIEW_PAGES
from .views import CONTENT_SECURITY_POLICY, blueprint


@hookimpl
def register_pages():
    return [Pages("/", blueprint, None, CONTENT_SECURITY_POLICY), PREVIEW_PAGES]
