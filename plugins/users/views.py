"""/api/user endpoints."""
from core import auth, db
from core.api import Api

from . import service

user_api = Api("user", __name__, url_prefix="/user")


@user_api.get("/current")
def current():
    """The calling user, with groups and personal collection."""
    return service.current_user_json(db.session(), auth.require_user())
