"""/api/permissions/graph*, /api/permissions/execution/graph and /api/collection/graph (superusers).

The collection graph lives on its own blueprint with prefix /collection/graph so that the
collections plugin can own /collection without a clash.
"""
from typing import Any

from pydantic import Field

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import (
    Bool,
    IntGreaterThanOrEqualToZero,
    Map,
    NonBlankStr,
    PositiveInt,
)

from . import collection_graph, graphs
from .views import permissions_api

collection_graph_api = Api("collection_graph", __name__, url_prefix="/collection/graph", auth="superuser")


class Graph(Params):
    revision: IntGreaterThanOrEqualToZero
    groups: Map
    sandboxes: Any = None
    impersonations: Any = None


class CollectionGraph(Params):
    revision: IntGreaterThanOrEqualToZero
    groups: Map
    namespace: NonBlankStr | None = None


class PutOptions(Params):
    force: Bool | None = None
    skip_graph: Bool | None = Field(None, alias="skip-graph")


class Namespace(Params):
    namespace: NonBlankStr | None = None


class NamespacePutOptions(PutOptions):
    namespace: NonBlankStr | None = None


class DbId(Params):
    db_id: PositiveInt


class GroupId(Params):
    group_id: PositiveInt


@permissions_api.get("/graph", auth="superuser")
def data_graph_v1():
    """The data permission graph in the v1 shape (data, download, data-model, details)."""
    return graphs.data_graph(db.session(), version=1)


@permissions_api.get("/graph-v2", auth="superuser")
def data_graph_v2():
    """The data permission graph in the v2 shape (view-data, create-queries, download, data-model, details)."""
    return graphs.data_graph(db.session(), version=2)


@permissions_api.get("/graph/db/<db_id>", path=DbId, auth="superuser")
def data_graph_for_database(path: DbId):
    """The v2 graph of one database, for every group."""
    return graphs.data_graph_of(db.session(), db_id=path.db_id)


@permissions_api.get("/graph/group/<group_id>", path=GroupId, auth="superuser")
def data_graph_for_group(path: GroupId):
    """The v2 graph of one group, for every database."""
    return graphs.data_graph_of(db.session(), group_id=path.group_id)


@permissions_api.put("/graph", query=PutOptions, body=Graph, auth="superuser")
def put_data_graph(query: PutOptions, body: Graph):
    """Apply a graph fragment (v1 or v2) if its revision is current; 409 otherwise, 402 for sandboxes."""
    graph, revision, _ = graphs.put_data_graph(db.session(), auth.require_user(), body.model_dump(by_alias=True),
                                               bool(query.force))
    return {"revision": revision} if query.skip_graph else graph


@permissions_api.get("/execution/graph", auth="superuser")
def execution_graph():
    """Which groups may run actions on which databases."""
    return graphs.execution_graph(db.session())


@permissions_api.put("/execution/graph", query=PutOptions, body=Graph, auth="superuser")
def put_execution_graph(query: PutOptions, body: Graph):
    """Apply an execution graph fragment if its revision is current; 409 otherwise."""
    graph = graphs.put_execution_graph(db.session(), auth.require_user(), body.model_dump(by_alias=True),
                                       bool(query.force))
    return {"revision": graph["revision"]} if query.skip_graph else graph


@collection_graph_api.get("/", query=Namespace)
def get_collection_graph(query: Namespace):
    """The collection permission graph of a namespace (default when omitted)."""
    return collection_graph.collection_graph(db.session(), query.namespace)


@collection_graph_api.put("/", query=NamespacePutOptions, body=CollectionGraph)
def put_collection_graph(query: NamespacePutOptions, body: CollectionGraph):
    """Apply a collection graph fragment if its revision is current; 409 otherwise."""
    graph = collection_graph.put_collection_graph(db.session(), auth.require_user(), body.model_dump(by_alias=True),
                                                  body.namespace or query.namespace, bool(query.force))
    return {"revision": graph["revision"]} if query.skip_graph else graph
