"""The web app's routes: each reads (or writes) through the API as the signed-in user and draws one
template. URLs are Metabase's frontend ones, so links people already have keep working.

Writes come from htmx with JSON bodies (json-enc): they pass the API's cross-site rule
(core.http.auth.check_not_cross_site) like any API write made with the session cookie.
"""
from __future__ import annotations

import re
from pathlib import Path

from flask import Blueprint, Response, request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import NotFound

from core.assembly.pages import Assets
from core.http import auth
from core.http.internal import call, exists

from . import render
from .render import Failed, Redirect, go, page, read, signed_in_user

HERE = Path(__file__).parent
STATIC = HERE / "static"
ASSETS = Assets(STATIC)

# Scripts and styles come from Tessera alone and none is inline; charts are SVG pictures of our own; the
# only frame is the share page's embed preview (sharing_preview.py), served here too.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'")

blueprint = Blueprint("app", __name__, template_folder="templates")


@blueprint.context_processor
def assets():
    return {"asset_version": ASSETS.version}


# A link or control that reads a plugin's API is drawn only while that API exists. A global rather than
# a context value: macros imported without the page's context (the bookmark button) ask it too.
blueprint.add_app_template_global(exists, "api_exists")


def slug(name: object) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(name or "").lower()).strip("-")[:60]


# Where an item of collection items or search results opens (Metabase's frontend URLs).
ITEM_PATHS = {"card": "/question", "dataset": "/question", "metric": "/question", "dashboard": "/dashboard",
              "collection": "/collection"}


@blueprint.app_template_filter("item_url")
def item_url(item: dict) -> str:
    model, item_id = item.get("model"), item.get("id")
    if model == "table":
        return f"/auto/dashboard/table/{item_id}"
    if model == "database":
        return f"/browse/databases/{item_id}-{slug(item.get('name'))}"
    base = ITEM_PATHS.get(model)
    if base is None or item_id is None:
        return "#"
    return f"{base}/{item_id}-{slug(item.get('name'))}".rstrip("-")


@blueprint.errorhandler(Redirect)
def redirected(exc: Redirect):
    return go(exc.location)


@blueprint.errorhandler(Failed)
def failed(exc: Failed):
    return render.failed(exc.answer, auth.current_user())


@blueprint.after_request
def not_cached(response: Response) -> Response:
    if response.mimetype == "text/html":
        response.headers["Cache-Control"] = "no-store"  # pages hold the user's data
        response.headers.setdefault("Vary", "HX-Request")
    return response


def posted() -> dict:
    """The body of an htmx write (JSON), after the API's cross-site rule."""
    auth.check_not_cross_site(request)
    body = request.get_json(silent=True)
    return body if isinstance(body, dict) else {}


def as_args(body: dict) -> MultiDict:
    """A form posted by json-enc (a repeated field arrives as a list) as the MultiDict a GET form gives."""
    pairs = []
    for name, value in body.items():
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, (str, int, float)) and not isinstance(one, bool):
                pairs.append((str(name), str(one)))
    return MultiDict(pairs)


def fragment(template: str, status: int = 200, **context) -> Response:
    from flask import render_template

    return Response(render_template(template, **context), status=status, mimetype="text/html")


def local_path(target: str | None) -> str:
    """Where to go after signing in: a path of this server only (never //elsewhere or a full URL)."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


# -- assets ------------------------------------------------------------------------------------------

@blueprint.get("/app/assets/<name>")
def asset(name: str):
    return ASSETS.response(name)


# -- setup, sign-in, profile ----------------------------------------------------------------------------

@blueprint.get("/setup")
def setup():
    properties = render.properties()
    if properties.get("has-user-setup"):
        return go("/")
    return setup_page(properties)


def setup_page(properties: dict) -> Response:
    return page("app/setup.html", name="setup", title="Welcome to Tessera", token=properties.get("setup-token") or "")


@blueprint.post("/setup")
def setup_submit():
    body = posted()
    user = {key: body.get(key) or None for key in ("first_name", "last_name", "email", "password")}
    answer = call("POST", "/api/setup", json={
        "token": body.get("token") or "", "user": user,
        "prefs": {"site_name": body.get("site_name") or None}})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    response = go("/setup/database")  # the optional last step (setup_data.py), signed in by this cookie
    for cookie in answer.cookies:
        response.headers.add("Set-Cookie", cookie)
    return response


@blueprint.get("/auth/login")
def login():
    properties = render.properties()
    if not properties.get("has-user-setup"):
        return go("/setup")
    if auth.current_user() is not None:
        return go(local_path(request.args.get("redirect")))
    # Password login off (plugins/sso): the form stays for LDAP logins, else it is drawn only on the
    # break-glass link (?password=1).
    passwords = properties.get("enable-password-login", True) is not False
    directory = bool(properties.get("ldap-enabled"))
    return page("app/login.html", name="login", title="Sign in", target=local_path(request.args.get("redirect")),
                passwords=passwords, password_form=passwords or directory or request.args.get("password") == "1",
                email_configured=bool(properties.get("email-configured?")) and passwords,
                # JWT single sign-on (plugins/sso) starts at /auth/sso, which comes back to `target`.
                sso=bool(properties.get("jwt-enabled")),
                # Google Sign-In (plugins/sso) starts at /auth/google, which comes back to `target`.
                google=bool(properties.get("google-auth-enabled")),
                # OpenID Connect providers (plugins/sso) start at /auth/sso/NAME, which comes back to `target`.
                oidc_providers=properties.get("oidc-sign-in-providers") or [],
                # With LDAP (plugins/sso) people may sign in with a directory login that is no e-mail address.
                directory=directory)


@blueprint.post("/auth/login")
def login_submit():
    body = posted()
    answer = call("POST", "/api/session", json={"username": body.get("username") or "",
                                                "password": body.get("password") or "",
                                                "remember": bool(body.get("remember"))})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=login_message(answer))
    response = go(local_path(body.get("redirect")))
    for cookie in answer.cookies:
        response.headers.add("Set-Cookie", cookie)
    return response


def login_message(answer) -> str:
    body = answer.body if isinstance(answer.body, dict) else {}
    errors = body.get("errors") if isinstance(body.get("errors"), dict) else {}
    # The throttle's and the credentials' own words, as the API gives them.
    return next(iter(errors.values()), None) or answer.message or "Signing in failed."


@blueprint.post("/auth/logout")
def logout():
    posted()
    answer = call("DELETE", "/api/session")
    response = go("/auth/login")
    for cookie in answer.cookies:
        response.headers.add("Set-Cookie", cookie)
    if not answer.cookies:
        auth.clear_session_cookies(response)
    return response


@blueprint.get("/account/profile")
def profile():
    user = signed_in_user()
    me = read("/api/user/current")
    return page("app/profile.html", name="profile", title="Your account", obj=me, user=user, me=me)


@blueprint.post("/account/profile")
def profile_submit():
    user = signed_in_user()
    body = posted()
    changes = {key: body.get(key) for key in ("first_name", "last_name", "locale") if key in body}
    if changes.get("locale") == "":
        changes["locale"] = None
    answer = call("PUT", f"/api/user/{user.id}", json=changes)
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    return fragment("app/_form_done.html", message="Saved.")


@blueprint.post("/account/password")
def password_submit():
    user = signed_in_user()
    body = posted()
    answer = call("PUT", f"/api/user/{user.id}/password", json={
        "password": body.get("password") or "", "old_password": body.get("old_password") or ""})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    response = fragment("app/_form_done.html", message="Your password was changed.")
    for cookie in answer.cookies:  # a password change ends the other sessions and renews this one
        response.headers.add("Set-Cookie", cookie)
    return response


# -- looking -----------------------------------------------------------------------------------------

ID_SLUG = re.compile(r"(\d+)(?:-[^/]*)?")


def id_of(id_slug: str) -> int:
    """The id of Metabase's /thing/:id-slug URLs ("12-sales-by-month" -> 12)."""
    match = ID_SLUG.fullmatch(id_slug)
    if not match or len(match.group(1)) > 15:
        raise NotFound()
    return int(match.group(1))


@blueprint.get("/")
def home():
    if auth.current_user() is None:
        properties = render.properties()
        if not properties.get("has-user-setup"):  # "/" of a fresh server is its setup, as Metabase's is
            return setup_page(properties)
    user = signed_in_user()
    pinned = read("/api/collection/root/items", pinned_state="is_pinned")
    collections = read("/api/collection/root/items", models="collection", pinned_state="is_not_pinned")
    me = read("/api/user/current")
    return page("app/home.html", name="home", title="Home", user=user, me=me,
                pinned=pinned.get("data", []), collections=collections.get("data", []), **activity())


def activity() -> dict:
    """Home's recent and popular items (plugins.activity); none when that plugin is disabled."""
    recent, popular = call("GET", "/api/activity/recent_views"), call("GET", "/api/activity/popular_items")
    return {"recent": recent.body.get("recent_views", []) if recent.ok else [],
            "popular": popular.body.get("popular_items", []) if popular.ok else []}


@blueprint.get("/collection/<id_slug>")
def collection(id_slug: str):
    user = signed_in_user()
    if id_slug == "root":
        path, key = "/api/collection/root", "root"
    elif id_slug == "trash":
        return trash(user)
    else:
        key = id_of(id_slug)
        path = f"/api/collection/{key}"
    if key == "root":
        # Someone without access to the root's own items still sees the collections in it they may
        # read: its item listing (filtered by the API) decides, as in Metabase.
        answer = call("GET", path)
        info = answer.body if answer.ok else {"name": "Our analytics", "id": "root"}
    else:
        info = read(path)
    items = read(f"{path}/items", sort_column="name", sort_direction="asc")
    return page("app/collection.html", name="collection", title=info.get("name") or "Our analytics", obj=info,
                user=user, items=items.get("data", []), collection_key=key)


def trash(user):
    from .collections_edit_items import trash_items  # the trash reaches into every collection

    return page("app/collection.html", name="collection", title="Trash", obj={"name": "Trash", "archived": True},
                user=user, items=trash_items(), collection_key="trash")


@blueprint.get("/search")
def search():
    user = signed_in_user()
    q = (request.args.get("q") or "").strip()
    models = [m for m in request.args.getlist("type") if m]
    results = read("/api/search", q=q or None, models=models or None) if q or models else {"data": []}
    return page("app/search.html", name="search", title=f"Results for “{q}”" if q else "Search", user=user,
                q=q, models=models, results=results.get("data", []), total=results.get("total", 0))


# Where an archived item of each kind is restored (PUT with archived false, as Metabase's trash does).
RESTORED_THROUGH = {"card": "card", "dataset": "card", "metric": "card", "dashboard": "dashboard",
                    "collection": "collection"}


@blueprint.post("/collection/trash/restore")
def restore():
    signed_in_user()
    body = posted()
    kind, item_id = RESTORED_THROUGH.get(body.get("model")), body.get("id")
    if kind is None or type(item_id) is not int or not 0 < item_id < 2**63:
        return fragment("app/_form_error.html", status=400, message="Say which item to restore (its kind and id).")
    answer = call("PUT", f"/api/{kind}/{item_id}", json={"archived": False})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    return fragment("app/_form_done.html", message=f"{answer.body.get('name', 'The item')} is back in its collection.")
