"""/api/dashboard CRUD, layout, revisions, sharing lists, related and save: parse, call one service
function, return what it gives."""
from core.appdb import db
from core.http import auth

from . import revisions, save, service, sharing
from . import schemas as s
from .blueprint import dashboard_api
from .serialize import dashboard_json


@dashboard_api.get("/", query=s.ListQuery)
def list_dashboards(query):
    """Dashboards the caller may read, by name; f=mine (created by the caller) or f=archived."""
    return service.list_dashboards(db.session(), auth.require_user(), query.f)


@dashboard_api.post("/", body=s.DashboardCreate)
def create(body):
    """A new, empty dashboard (write permission on its collection)."""
    session, user = db.session(), auth.require_user()
    return dashboard_json(session, user, service.create_dashboard(session, user, body))


@dashboard_api.get("/public", auth="superuser")
def public():
    """Dashboards shared by public link: [{id, name, public_uuid}]."""
    return sharing.public_dashboards(db.session(), auth.require_user())


@dashboard_api.get("/embeddable", auth="superuser")
def embeddable():
    """Dashboards with embedding enabled: [{id, name}]."""
    return sharing.embeddable_dashboards(db.session(), auth.require_user())


@dashboard_api.get("/<id>", path=s.DashboardId, query=s.GetQuery)
def get(path, query):
    """One dashboard with its dashcards (cards the caller cannot read show only their id), tabs,
    param_fields, collection and what the caller may do; counts a view unless ignore_view is true."""
    session, user = db.session(), auth.require_user()
    return service.viewed_dashboard_json(session, user, path.id, bool(query.ignore_view))


@dashboard_api.put("/<id>", path=s.DashboardId, body=s.DashboardUpdate)
def update(path, body):
    """Change a dashboard; `dashcards` and `tabs` are the full desired sets (negative id: new). One
    transaction: an invalid part changes nothing."""
    session, user = db.session(), auth.require_user()
    return dashboard_json(session, user, service.update_dashboard(session, user, path.id, body))


@dashboard_api.put("/<id>/cards", path=s.DashboardId, body=s.CardsUpdate)
def update_cards(path, body):
    """Deprecated: set the dashcards and tabs; answers {cards, tabs}."""
    return service.update_cards(db.session(), auth.require_user(), path.id, body)


@dashboard_api.delete("/<id>", path=s.DashboardId, status=204)
def delete(path):
    """Delete the dashboard for good (archiving is PUT archived=true)."""
    service.delete_dashboard(db.session(), auth.require_user(), path.id)


@dashboard_api.get("/<id>/revisions", path=s.DashboardId)
def revision_history(path):
    """The dashboard's revisions, newest first."""
    return revisions.history(db.session(), auth.require_user(), path.id)


@dashboard_api.post("/<id>/revert", path=s.DashboardId, body=s.RevertBody)
def revert(path, body):
    """Put the dashboard, its tabs and dashcards back as a revision had them; answers the new revision."""
    return revisions.revert(db.session(), auth.require_user(), path.id, body.revision_id)


@dashboard_api.get("/<id>/related", path=s.DashboardId)
def related(path):
    """Questions similar to the dashboard's cards."""
    return service.related(db.session(), auth.require_user(), path.id)


@dashboard_api.post("/<id>/public_link", path=s.DashboardId, auth="superuser")
def create_public_link(path):
    """Share by public UUID (the existing one when already shared)."""
    return sharing.create_public_link(db.session(), auth.require_user(), path.id)


@dashboard_api.delete("/<id>/public_link", path=s.DashboardId, auth="superuser", status=204)
def delete_public_link(path):
    """Stop sharing by public UUID."""
    sharing.delete_public_link(db.session(), auth.require_user(), path.id)


@dashboard_api.post("/save", body=s.SavedDashboard)
def save_dashboard(body):
    """Save a denormalized dashboard (an automatic dashboard) with its cards, in a new collection."""
    session, user = db.session(), auth.require_user()
    return dashboard_json(session, user, save.save(session, user, body, None))


@dashboard_api.post("/save/collection/<parent_collection_id>", path=s.SaveCollectionPath, body=s.SavedDashboard)
def save_into(path, body):
    """The same, with the new collection inside `parent_collection_id`."""
    session, user = db.session(), auth.require_user()
    return dashboard_json(session, user, save.save(session, user, body, path.parent_collection_id))
