"""The share page of a dashboard or a question (`/dashboard/:id-slug/share`, `/question/:id-slug/share`),
as Metabase's sharing menu: its public link (made and removed through POST/DELETE .../public_link), and
its signed embedding (PUT enable_embedding and embedding_params, the token code a site runs, and a live
preview of the embed through /api/preview-embed, drawn by sharing_preview.py in an iframe).

Both are for administrators, as the API decides: the page offers a section only when the settings that
the API checks are on (`enable-public-sharing`, `enable-embedding-static`) and the user is an
administrator, and what the API refuses is shown as its refusal.
"""
from __future__ import annotations

from urllib.parse import urlencode

from flask import request

from core.http.internal import call

from . import question_params, render, sharing_code
from .render import go, page, read, signed_in_user
from .views import blueprint, fragment, id_of, posted, slug

# The page's kinds: (API path, public/embed page path, what the page calls it).
KINDS = {"dashboard": ("dashboard", "dashboard", "dashboard"), "question": ("card", "question", "question")}


class Shared:
    """The object being shared as the API gives it to this user, with its paths."""

    def __init__(self, kind: str, id_slug: str):
        self.kind = kind
        self.api, self.page_kind, self.noun = KINDS[kind]
        self.id = id_of(id_slug)
        self.data = read(f"/api/{self.api}/{self.id}", ignore_view=True)
        self.path = f"/{kind}/{self.id}-{slug(self.data.get('name'))}".rstrip("-")
        self.share_path = f"{self.path}/share"

    @property
    def parameters_obj(self) -> dict:
        """The object with the parameters an embed of it takes (a native question's tags included)."""
        if self.kind == "question":
            return {**self.data, "parameters": question_params.parameters(self.data)}
        return self.data


def site_url(settings: dict) -> str:
    return str(settings.get("site-url") or request.host_url).rstrip("/")


def public_context(shared: Shared, settings: dict) -> dict:
    uuid = shared.data.get("public_uuid")
    link = f"{site_url(settings)}/public/{shared.page_kind}/{uuid}" if uuid else None
    iframe = (f'<iframe src="{link}" frameborder="0" width="800" height="600" allowtransparency></iframe>'
              if link else None)
    return {"shared": shared, "public_link": link, "public_iframe": iframe}


def embed_context(shared: Shared, settings: dict, args) -> dict:
    params = sharing_code.params_of(shared.parameters_obj, args)
    site = site_url(settings)
    snippets = [(key, label, sharing_code.code(key, site, shared.kind, shared.id, params))
                for key, label in sharing_code.LANGUAGES]
    secret = call("GET", "/api/setting/embedding-secret-key")
    preview = None
    if secret.ok and isinstance(secret.body, str) and secret.body:
        token = sharing_code.preview_token(secret.body, shared.kind, shared.id, params)
        preview = f"/embed-preview/{shared.page_kind}/{token}"
    return {"params": params, "rules": sharing_code.RULES, "snippets": snippets, "preview_url": preview,
            "embedding_on": bool(shared.data.get("enable_embedding"))}


def draw(kind: str, id_slug: str):
    user = signed_in_user()
    shared = Shared(kind, id_slug)
    settings = render.properties()
    admin = bool(getattr(user, "is_superuser", False))
    public = admin and bool(settings.get("enable-public-sharing"))
    embedding = admin and bool(settings.get("enable-embedding-static"))
    context = {"public": public, "embedding": embedding, **public_context(shared, settings)}
    if embedding:
        context.update(embed_context(shared, settings, request.args))
    return page("app/share.html", name="share", title=f"Share {shared.data.get('name') or shared.noun}",
                obj=shared.data, user=user, **context)


def public_link(kind: str, id_slug: str):
    signed_in_user()
    body = posted()
    shared = Shared(kind, id_slug)
    method = "POST" if body.get("public") == "on" else "DELETE"
    answer = call(method, f"/api/{shared.api}/{shared.id}/public_link")
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    shared = Shared(kind, id_slug)
    return fragment("app/_share_public.html", **public_context(shared, render.properties()))


def embedding(kind: str, id_slug: str):
    signed_in_user()
    body = posted()
    shared = Shared(kind, id_slug)
    params = sharing_code.params_of(shared.parameters_obj, body)
    answer = call("PUT", f"/api/{shared.api}/{shared.id}", json={
        "enable_embedding": body.get("enable_embedding") == "on",
        "embedding_params": sharing_code.embedding_params(params)})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status, message=answer.message)
    # The page again with the form's preview values, so the code and preview show what was published.
    values = [(f"value.{p.slug}", p.value) for p in params if p.rule == "locked" and p.value]
    return go(shared.share_path + (f"?{urlencode(values)}" if values else "") + "#embedding")


for _kind in KINDS:
    blueprint.add_url_rule(f"/{_kind}/<id_slug>/share", f"share_{_kind}",
                           lambda id_slug, _k=_kind: draw(_k, id_slug), methods=["GET"])
    blueprint.add_url_rule(f"/{_kind}/<id_slug>/share/public-link", f"share_{_kind}_public",
                           lambda id_slug, _k=_kind: public_link(_k, id_slug), methods=["POST"])
    blueprint.add_url_rule(f"/{_kind}/<id_slug>/share/embedding", f"share_{_kind}_embedding",
                           lambda id_slug, _k=_kind: embedding(_k, id_slug), methods=["POST"])
