"""/api/setup."""
from core.appdb import db
from core.http import auth
from core.http.api import Api, Params, json_response
from core.http.types import Email, NameStr, NonBlankStr, Str

from . import service

setup_api = Api("setup", __name__, url_prefix="/setup", auth="public")


class SetupUser(Params):
    first_name: NameStr | None = None
    last_name: NameStr | None = None
    email: Email
    password: NonBlankStr


class SetupPrefs(Params):
    site_name: NameStr
    site_locale: Str | None = None
    allow_tracking: object = None


class Setup(Params):
    token: NonBlankStr
    user: SetupUser
    prefs: SetupPrefs


@setup_api.post("/", body=Setup)
def setup(body: Setup):
    """Create the first superuser with the setup token; returns a session id like a login."""
    _, token = service.set_up(db.session(), token=body.token, user=body.user.model_dump(),
                              prefs=body.prefs.model_dump())
    return auth.set_session_cookies(json_response({"id": token}), token)
