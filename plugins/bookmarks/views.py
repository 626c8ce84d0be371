"""/api/bookmark endpoints: parse, call one service function, return what it gives."""
from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import service
from .schemas import BookmarkPath, OrderingBody

bookmark_api = Api("bookmark", __name__, url_prefix="/bookmark")


@bookmark_api.get("/")
def list_bookmarks():
    """The caller's bookmarks they can still read and that are not archived, in their order."""
    return service.list_bookmarks(db.session(), auth.require_user())


@bookmark_api.post("/<model>/<id>", path=BookmarkPath)
def create(path: BookmarkPath):
    """Bookmark a card, collection or dashboard the caller can read."""
    return service.create(db.session(), auth.require_user(), path.model, path.id)


@bookmark_api.delete("/<model>/<id>", path=BookmarkPath, status=204)
def delete(path: BookmarkPath):
    """Remove the caller's bookmark of that item (204 also when there was none)."""
    service.delete(db.session(), auth.require_user(), path.model, path.id)


@bookmark_api.put("/ordering", body=OrderingBody, status=204)
def ordering(body: OrderingBody):
    """Replace the caller's bookmark order with the given list."""
    service.save_ordering(db.session(), auth.require_user(), [(o.type, o.item_id) for o in body.orderings])
