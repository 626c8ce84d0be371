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

from . import account, browse, dashboard, question, setup_data  # noqa: F401 - their routes join the blueprint
from .views import CONTENT_SECURITY_POLICY, blueprint


@hookimpl
def register_pages():
    return [Pages("/", blueprint, None, CONTENT_SECURITY_POLICY)]
