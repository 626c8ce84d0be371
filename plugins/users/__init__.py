"""/api/user: the users of this instance."""
from core import hookimpl

from .views import user_api


@hookimpl
def register_routes():
    return [user_api]
