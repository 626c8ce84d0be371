"""GET /api/search."""
from core.appdb import db
from core.http import auth
from core.http.api import Api
from core.http.paging import PagingParams, paging
from core.http.types import BoolStr, Enum, PositiveInt, Str

from . import service

search_api = Api("search", __name__, url_prefix="/search")

SearchModel = Enum(*service.SEARCHABLE)
PersonalFilter = Enum("all", "only", "only-mine", "exclude", "exclude-others")


class SearchQuery(PagingParams):
    q: Str | None = None
    models: list[SearchModel] | None = None
    archived: BoolStr | None = None
    table_db_id: PositiveInt | None = None
    created_by: list[PositiveInt] | None = None
    last_edited_by: list[PositiveInt] | None = None
    filter_items_in_personal_collection: PersonalFilter | None = None
    search_native_query: BoolStr | None = None
    ids: list[PositiveInt] | None = None


@search_api.get("/", query=SearchQuery)
def search(query: SearchQuery):
    """Search what the caller may see by name and description, best matches first."""
    filters = service.Filters(
        q=(query.q or "").strip() or None, models=query.models or None, archived=bool(query.archived),
        table_db_id=query.table_db_id, created_by=set(query.created_by or ()),
        last_edited_by=set(query.last_edited_by or ()), personal=query.filter_items_in_personal_collection,
        ids=set(query.ids or ()), search_native_query=bool(query.search_native_query))
    return service.search(db.session(), auth.require_user(), filters, paging(query))
