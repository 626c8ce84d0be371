"""/api/api-key, and authentication by the X-API-KEY header when no session authenticates."""
from core import hookimpl
from core.http.auth import (
    API_KEY_HEADER,  # werkzeug headers are case-insensitive: x-api-key works too
)

from . import service
from .views import api_key_api


@hookimpl
def register_routes():
    return [api_key_api]


@hookimpl
def authenticate(request, session):
    presented = request.headers.get(API_KEY_HEADER)
    if not presented:
        return None
    return service.user_for_key(session, presented.strip())
