"""The live preview of a signed embed (`/embed-preview/dashboard|question/<token>`), shown by the share
page in an iframe: the object as /api/preview-embed gives it for the token the share page signed (its
`_embedding_params` and locked values; sharing_code.py), drawn by the dashboard page's own template and
card fragments, with the filters an embed would offer (the enabled ones the token does not set).

It is its own page blueprint because it is framed: its pages allow framing by this server alone
(`frame-ancestors 'self'`), while every other app page refuses framing. The API requires an
administrator for every preview read, so the page shows nothing to anyone else.
"""
from __future__ import annotations

from urllib.parse import quote

import orjson
from flask import Blueprint
from werkzeug.exceptions import NotFound

from core import Pages
from core.http.internal import call

from . import boards, cards, dashboard, filters, render
from .render import Failed, Redirect, go, page, signed_in_user
from .views import ASSETS, CONTENT_SECURITY_POLICY

preview_blueprint = Blueprint("app_embed_preview", __name__, template_folder="templates")
API = "/api/preview-embed"


@preview_blueprint.context_processor
def assets():
    return {"asset_version": ASSETS.version}


@preview_blueprint.after_request
def not_cached(response):
    response.headers["Cache-Control"] = "no-store"  # the user's data, and a token in the URL
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@preview_blueprint.errorhandler(Redirect)
def redirected(exc: Redirect):
    return go(exc.location)


@preview_blueprint.errorhandler(Failed)
def failed(exc: Failed):
    return render.failed(exc.answer, None)


def _token(token: str) -> str:
    if not token or len(token) > 8000:
        raise NotFound()
    return quote(token, safe="")


class PreviewBoard(boards.Board):
    """A dashboard as its embed would show it: the preview API runs each card with the token's rules."""

    saved = True  # nothing to save: the preview offers no "Save this"

    def __init__(self, token: str):
        self.token = _token(token)
        super().__init__(render.read(f"{API}/dashboard/{self.token}"), f"/embed-preview/dashboard/{self.token}")

    def _values(self, filters_: list[filters.Filter]) -> list[tuple[str, str]]:
        return filters.query_pairs(filters_)

    def run(self, dashcard, filters_):
        return self.run_series(dashcard, {"id": dashcard["card_id"]}, filters_)

    def run_series(self, dashcard, card, filters_):
        path = f"{API}/dashboard/{self.token}/dashcard/{dashcard['id']}/card/{card['id']}"
        return call("GET", path, query=_multi(self._values(filters_)))

    def values(self, parameter, filters_, query):
        key = quote(str(parameter["id"]), safe="")
        if query:  # the preview API lists values but has no search: narrow the list here
            answer = call("GET", f"{API}/dashboard/{self.token}/params/{key}/values",
                          query=filters.constraints(filters_, str(parameter["id"])))
            if answer.ok and isinstance(answer.body, dict):
                wanted = query.lower()
                answer.body["values"] = [v for v in answer.body.get("values") or []
                                         if wanted in str(v[0] if isinstance(v, list) and v else v).lower()]
            return answer
        return call("GET", f"{API}/dashboard/{self.token}/params/{key}/values",
                    query=filters.constraints(filters_, str(parameter["id"])))

    def download(self, dashcard, filters_, export_format):
        values = {slug: value for slug, value in self._values(filters_)}
        fields = {"token": self.token, "parameters": orjson.dumps(values).decode(), "format_rows": "true"}
        return (f"{API}/dashboard/{self.data.get('id')}/dashcard/{dashcard['id']}/card/{dashcard['card_id']}"
                f"/export/{export_format}"), fields


def _multi(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, value in pairs:
        found.setdefault(key, []).append(value)
    return found


@preview_blueprint.get("/dashboard/<token>")
def dashboard_preview(token: str):
    signed_in_user()
    return dashboard.draw(PreviewBoard(token), None)


@preview_blueprint.get("/dashboard/<token>/card/<dashcard_id>")
def dashboard_preview_card(token: str, dashcard_id: str):
    signed_in_user()
    return dashboard.draw_card(PreviewBoard(token), dashcard_id)


@preview_blueprint.get("/dashboard/<token>/values/<parameter_id>")
def dashboard_preview_values(token: str, parameter_id: str):
    signed_in_user()
    return dashboard.draw_values(PreviewBoard(token), parameter_id)


@preview_blueprint.get("/question/<token>")
def question_preview(token: str):
    """A question's embed: its result with the token's locked values (its card as the dashboard page
    draws one query card)."""
    signed_in_user()
    key = _token(token)
    card = render.read(f"{API}/card/{key}")
    answer = call("GET", f"{API}/card/{key}/query")
    dashcard = {"card": card, "size_x": 18, "size_y": 8}
    body = cards.body(dashcard, answer, sort=None, descending=False, page=1, url=lambda **_: "#")
    return page("app/share_preview.html", name="share-preview", title=card.get("name") or "Question",
                obj=card, user=None, body=body)


def frame_ancestors(session) -> str:
    return "'self'"


PREVIEW_PAGES = Pages("/embed-preview", preview_blueprint, frame_ancestors, CONTENT_SECURITY_POLICY)
