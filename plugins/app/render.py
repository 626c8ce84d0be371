"""Drawing a web-app page: who is signed in, the navigation (the app's links, then every plugin's
`app_nav_links`), what plugins put under the heading (`app_page_slot`), and the error pages.

Everything a page shows comes from core.http.internal.call: the API's own answer to the same user.
"""
from __future__ import annotations

from urllib.parse import quote

import orjson
from flask import Response, redirect, render_template, request
from markupsafe import Markup

from core.assembly.records import NavLink
from core.http import auth
from core.http.internal import Answer, call

# The app's own links, before the plugins' (label, path).
OWN_LINKS = (("Home", "/"), ("New question", "/question/notebook"), ("New SQL query", "/question/native"),
             ("New dashboard", "/dashboard/new"),
             ("Browse data", "/browse/databases"),
             ("Search", "/search"))


class Redirect(Exception):
    """Raised by a view's helpers to leave the page for another (sign in first, or set up first)."""

    def __init__(self, location: str):
        self.location = location


def signed_in_user():
    """The signed-in user, or a Redirect to the login page that comes back here afterwards."""
    user = auth.current_user()
    if user is None:
        if not properties().get("has-user-setup"):
            raise Redirect("/setup")
        raise Redirect("/auth/login?redirect=" + quote(request.full_path.rstrip("?"), safe="/"))
    return user


def properties() -> dict:
    """The public settings (site name, whether setup is done), as GET /api/session/properties gives them."""
    answer = call("GET", "/api/session/properties")
    return answer.body if answer.ok and isinstance(answer.body, dict) else {}


def read(path: str, **query) -> dict | list:
    """The API's answer to GET `path` for this user; a non-2xx answer becomes that error's page."""
    answer = call("GET", path, query=query or None)
    if not answer.ok:
        raise Failed(answer)
    return answer.body


class Failed(Exception):
    """An API answer that is not a success: drawn as the error page with the same status."""

    def __init__(self, answer: Answer):
        self.answer = answer


def nav_links(user) -> list[NavLink]:
    from core.http.auth import tessera

    links = [NavLink(label, href) for label, href in OWN_LINKS]
    # The admin area for superusers and group managers (who manage their groups' members there); each
    # admin page still reads through the API, which decides what it may show.
    if user.is_superuser or any(m.is_group_manager for m in user.memberships):
        links.append(NavLink("Admin", "/admin/people" if not user.is_superuser else "/admin"))
    for contributed in tessera().pm.hook.app_nav_links(user=user):
        links.extend(contributed or ())
    return links


def slots(page: str, obj, user) -> Markup:
    from core.http.auth import tessera

    results = tessera().pm.hook.app_page_slot(page=page, obj=obj, user=user)
    return Markup("").join(result for result in reversed(results) if result is not None)


def page(template: str, *, name: str, title: str, obj=None, user=None, status: int = 200, **context) -> Response:
    """A full page (or, for an htmx request, the same template: htmx swaps the part it asked for)."""
    settings = properties()
    # Setup scripts read the setup token from "/" as they do from Metabase's (its bootstrap JSON). Only
    # the public settings, as Metabase's: an admin's properties hold secrets (the embedding key), and
    # page HTML is kept by browsers, proxies and screenshots.
    from core.http.auth import tessera

    public = {definition.key for definition in tessera().settings.readable("public")}
    bootstrap = Markup(orjson.dumps({key: value for key, value in settings.items() if key in public})
                       .decode().replace("</", "<\\/"))
    html = render_template(template, page=name, title=title, obj=obj, user=user,
                           nav=nav_links(user) if user is not None else [],
                           slots=slots(name, obj, user) if user is not None else Markup(""),
                           bookmarks=bookmarks(user),
                           site_name=settings.get("site-name") or "Tessera", bootstrap=bootstrap, **context)
    return Response(html, status=status, mimetype="text/html")


def bookmarks(user) -> list[dict]:
    """The signed-in user's bookmarks for the navigation (GET /api/bookmark; none without the plugin)."""
    if user is None:
        return []
    answer = call("GET", "/api/bookmark")
    return answer.body if answer.ok and isinstance(answer.body, list) else []


def error_page(status: int, message: str, user=None) -> Response:
    titles = {401: "Sign in needed", 403: "Not allowed", 404: "Not found"}
    return page("app/error.html", name="error", title=titles.get(status, "Something went wrong"), user=user,
                status=status, message=message)


def failed(answer: Answer, user=None) -> Response:
    status = answer.status if 400 <= answer.status < 600 else 500
    if status == 403:
        message = "You don't have permission to see this."
    elif status == 404:
        message = "There is nothing here: it may have been moved or deleted."
    else:
        message = answer.message or "The server could not answer."
    return error_page(status, message, user)


def go(location: str) -> Response:
    """Leave for `location`: htmx follows HX-Redirect, a plain request a 303."""
    if request.headers.get("HX-Request"):
        return Response("", status=200, headers={"HX-Redirect": location})
    return redirect(location, code=303)
