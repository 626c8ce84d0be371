"""/api/native-query-snippet endpoints."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import Bool, BoolStr, DescriptionStr, NameStr, PositiveInt, Str

from . import service

snippet_api = Api("snippets", __name__, url_prefix="/native-query-snippet")


class ListQuery(Params):
    archived: BoolStr | None = None


class SnippetId(Params):
    id: PositiveInt


class NewSnippet(Params):
    name: NameStr
    content: Str
    description: DescriptionStr | None = None
    collection_id: PositiveInt | None = None


class SnippetChanges(Params):
    name: NameStr | None = None
    content: Str | None = None
    description: DescriptionStr | None = None
    archived: Bool | None = None
    collection_id: PositiveInt | None = None


@snippet_api.get("/", query=ListQuery)
def list_snippets(query: ListQuery):
    """Every snippet (archived ones with archived=true), by name."""
    return service.list_snippets(db.session(), auth.require_user(), bool(query.archived))


@snippet_api.get("/<id>", path=SnippetId)
def get_snippet(path: SnippetId):
    """One snippet."""
    return service.get(db.session(), auth.require_user(), path.id)


@snippet_api.post("/", body=NewSnippet)
def create_snippet(body: NewSnippet):
    """Create a snippet; its name must be unique."""
    return service.create(db.session(), auth.require_user(), body.name, body.content, body.description,
                          body.collection_id)


@snippet_api.put("/<id>", path=SnippetId, body=SnippetChanges)
def update_snippet(path: SnippetId, body: SnippetChanges):
    """Change a snippet's name, content, description, folder, or archive it."""
    changes = {k: getattr(body, k) for k in body.model_fields_set}
    for key in ("name", "content", "archived"):
        if key in changes and changes[key] is None:
            changes.pop(key)
    return service.update(db.session(), auth.require_user(), path.id, changes)
