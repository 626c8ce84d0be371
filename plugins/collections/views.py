"""/api/collection endpoints. The graph endpoints (/api/collection/graph) belong to the permissions
plugin; its more specific prefix wins over /<id> here."""
from core.appdb import db
from core.http import auth
from core.http.api import Api
from core.http.paging import paging

from . import service, tree
from .items import Options
from .schemas import (
    CollectionId,
    CreateBody,
    ItemsQuery,
    ListQuery,
    NamespaceQuery,
    RootItemsQuery,
    TreeQuery,
    UpdateBody,
)

collection_api = Api("collection", __name__, url_prefix="/collection")


def _options(query: ItemsQuery) -> Options:
    return Options(archived=bool(query.archived), pinned_state=query.pinned_state,
                   sort_column=query.sort_column or "name", sort_direction=query.sort_direction or "asc",
                   official_collections_first=query.official_collections_first is not False,
                   show_dashboard_questions=bool(query.show_dashboard_questions))


@collection_api.get("/", query=ListQuery)
def list_collections(query: ListQuery):
    """The collections the caller may read, the root first, each with can_write."""
    return service.list_collections(db.session(), auth.require_user(), archived=bool(query.archived),
                                    exclude_other_users=bool(query.exclude_other_user_collections),
                                    namespace=query.namespace, personal_only=bool(query.personal_only))


@collection_api.get("/tree", query=TreeQuery)
def collection_tree(query: TreeQuery):
    """Readable collections as a tree, with the kinds of items here and below each node."""
    return tree.collection_tree(db.session(), auth.require_user(), exclude_archived=bool(query.exclude_archived),
                                exclude_other_users=bool(query.exclude_other_user_collections),
                                namespace=query.namespace, shallow=bool(query.shallow),
                                collection_id=query.collection_id)


@collection_api.get("/root", query=NamespaceQuery)
def root_collection(query: NamespaceQuery):
    """The virtual root collection of a namespace."""
    return service.get_root(db.session(), auth.require_user(), query.namespace)


@collection_api.get("/root/items", query=RootItemsQuery)
def root_items(query: RootItemsQuery):
    """What the caller sees at the top level: items without a collection and top-level collections."""
    return service.collection_items(db.session(), auth.require_user(), None, models=query.models,
                                    options=_options(query), paging=paging(query), namespace=query.namespace)


@collection_api.get("/<id>", path=CollectionId)
def get_collection(path: CollectionId):
    """One collection with its effective location and ancestors."""
    return service.get_collection(db.session(), auth.require_user(), path.id)


@collection_api.get("/<id>/items", path=CollectionId, query=ItemsQuery)
def collection_items(path: CollectionId, query: ItemsQuery):
    """The items of a collection, sorted and optionally paged."""
    return service.collection_items(db.session(), auth.require_user(), path.id, models=query.models,
                                    options=_options(query), paging=paging(query))


@collection_api.post("/", body=CreateBody)
def create_collection(body: CreateBody):
    """Create a collection in a parent (or the root) the caller may write."""
    return service.create_collection(db.session(), auth.require_user(), **body.model_dump())


@collection_api.put("/<id>", path=CollectionId, body=UpdateBody)
def update_collection(path: CollectionId, body: UpdateBody):
    """Edit, move, archive or unarchive a collection."""
    changes = {key: getattr(body, key) for key in body.model_fields_set}
    return service.update_collection(db.session(), auth.require_user(), path.id, changes)
