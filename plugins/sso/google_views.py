"""Google Sign-In's API, as Metabase's: POST /api/session/google_auth (anyone) and PUT /api/google/settings
(administrators)."""
from flask import request
from pydantic import ConfigDict, Field

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params, json_response
from core.http.types import Bool, NonBlankStr, Str

from . import google

google_auth_api = Api("google_auth", __name__, url_prefix="/session/google_auth", auth="public")
google_api = Api("google", __name__, url_prefix="/google", auth="superuser")


class GoogleToken(Params):
    token: NonBlankStr


class GoogleSettings(Params):
    """Metabase's closed map: another key is refused; a key left out is nil."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    client_id: Str | None = Field(None, alias="google-auth-client-id")
    enabled: Bool | None = Field(None, alias="google-auth-enabled")
    domain: Str | None = Field(None, alias="google-auth-auto-create-accounts-domain")


@google_auth_api.post("/", body=GoogleToken)
def google_auth(body: GoogleToken):
    """Sign in with a Google ID token; returns the session id and sets the session cookie."""
    token = google.sign_in_with_token(db.session(), auth.tessera(), body.token, request.remote_addr)
    return auth.set_session_cookies(json_response({"id": token}), token)


@google_api.put("/settings", body=GoogleSettings, status=204)
def update_google_settings(body: GoogleSettings):
    """Set google-auth-client-id, google-auth-enabled and google-auth-auto-create-accounts-domain together."""
    session = db.session()
    google.save_settings(session, auth.tessera().settings, body.model_dump(by_alias=True))
    session.commit()
