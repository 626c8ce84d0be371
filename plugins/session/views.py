"""/api/session and /api/health."""
from flask import request
from core import auth, db
from core.api import Api, Params, json_response
from core.errors import NotFound
from core.types import Bool, NonBlankStr, Str

session_api = Api("session", __name__, url_prefix="/session", auth="public")
health_api = Api("health", __name__, url_prefix="/health", auth="public")


class Login(Params):
    username: NonBlankStr
    password: NonBlankStr
    remember: Bool | None = None


class PasswordCheck(Params):
    password: Str


@session_api.post("/", body=Login)
def login(body: Login):
    """Log in with an e-mail address and password; returns the session id and sets the session cookie."""
    token = auth.login(db.session(), body.username, body.password, request.remote_addr)
    return auth.set_session_cookies(json_response({"id": token}), token, bool(body.remember))


@session_api.delete("/")
def logout():
    """Log out: delete the session and clear its cookies."""
    token = auth.request_token(request)
    session = db.session()
    if not token or not auth.end_session(session, token):
        raise NotFound()
    session.commit()
    return auth.clear_session_cookies(json_response(None, 204))


@session_api.get("/properties")
def properties():
    """Every setting the caller may read, with the server's version and engines."""
    user = auth.current_user()
    visibility = "public" if user is None else ("admin" if user.is_superuser else "authenticated")
    return auth.tessera().settings.properties(db.session(), visibility)


@session_api.post("/password-check", body=PasswordCheck)
def password_check(body: PasswordCheck):
    """Check a password against the complexity rules and the common-password list."""
    auth.check_password_rules(body.password)
    return {"valid": True}


@health_api.get("/")
def health():
    """Liveness: the server answers and its app DB responds."""
    from sqlalchemy import text

    db.session().execute(text("SELECT 1"))
    return {"status": "ok"}
