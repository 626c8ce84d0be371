"""Public links (/api/public): find the shared object by its UUID and hand the request to the kind's
owner through its core.assembly.records.Shareable. Every route first checks the `enable-public-sharing`
setting (400 "Public sharing is not enabled.", before anything is looked up), then the object: absent,
archived or no longer public is 404. What the object shows and runs is the owner's answer for an
anonymous viewer (core.content.public, core.query.access.SharedGrant)."""
from __future__ import annotations

import html
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from core import SharedQuery
from core.assembly.records import Shareable
from core.content import shared
from core.http.errors import Invalid, NotFound
from core.policy.sharing import check_public_sharing

OEMBED_HEIGHT = 800
OEMBED_WIDTH = 1024
# The pages a public link or an embed opens (served at these paths by the pages of issue 17).
OEMBED_PATHS = ("/public/question/", "/public/dashboard/", "/embed/question/", "/embed/dashboard/")


def find(session: Session, model: str, uuid: str, slot: str | None = None) -> tuple[Shareable, Any]:
    """The kind and the unarchived object of `model` shared under `uuid` (sharing enabled: 400 first)."""
    check_public_sharing(session)
    kind = shared.require(model, slot)
    table = kind.table
    obj = session.scalar(select(table).where(table.public_uuid == uuid, table.archived.is_(False)))
    if obj is None:
        raise NotFound()
    return kind, obj


def parameters(value: Any) -> tuple:
    """The `parameters` query value: a JSON list of parameter objects ({} or null: none)."""
    if value is None or value == {}:
        return ()
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise Invalid({"parameters": "value must be a valid JSON string holding a list of parameter objects."})
    return tuple(value)


def public_json(session: Session, model: str, uuid: str) -> dict:
    kind, obj = find(session, model, uuid)
    return kind.public_json(session, obj, frozenset())


def run(session: Session, model: str, uuid: str, query: SharedQuery) -> tuple[bytes, int]:
    kind, obj = find(session, model, uuid, "run")
    return kind.run(session, obj, query)


def export(session: Session, model: str, uuid: str, query: SharedQuery, export_format: str):
    kind, obj = find(session, model, uuid, "export")
    return kind.export(session, obj, query, export_format)


def field_values(session: Session, model: str, uuid: str, field_id: int) -> dict:
    kind, obj = find(session, model, uuid, "field_values")
    return kind.field_values(session, obj, field_id)


def field_search(session: Session, model: str, uuid: str, field_id: int, search_field_id: int, value: str,
                 limit: int | None) -> list:
    kind, obj = find(session, model, uuid, "field_search")
    return kind.field_search(session, obj, field_id, search_field_id, value, limit)


def field_remapping(session: Session, model: str, uuid: str, field_id: int, remapped_id: int, value: str) -> list:
    kind, obj = find(session, model, uuid, "field_remapping")
    return kind.field_remapping(session, obj, field_id, remapped_id, value)


def param_values(session: Session, model: str, uuid: str, param_key: str, constraints: dict,
                 search: str | None = None) -> dict:
    kind, obj = find(session, model, uuid, "param_values")
    return kind.param_values(session, obj, param_key, constraints, search)


def param_remapping(session: Session, model: str, uuid: str, param_key: str, value: str) -> list:
    kind, obj = find(session, model, uuid, "param_remapping")
    return kind.param_remapping(session, obj, param_key, value)


def oembed(session: Session, url: str, maxheight: int | None, maxwidth: int | None) -> dict:
    """oEmbed for a public or embed page of this server: an iframe of it, the URL escaped."""
    check_public_sharing(session)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.path.startswith(OEMBED_PATHS):
        raise Invalid({"url": "value must be the URL of a public question or dashboard."})
    height, width = maxheight or OEMBED_HEIGHT, maxwidth or OEMBED_WIDTH
    src = html.escape(url, quote=True)
    return {"version": "1.0", "type": "rich", "width": width, "height": height,
            "html": f'<iframe src="{src}" width="{width}" height="{height}" frameborder="0"></iframe>'}
