"""/api/session and /api/health."""
from flask import current_app, request

from core.appdb import db
from core.http import auth
from core.http.api import Api, Params, json_response
from core.http.errors import NotFound
from core.http.throttle import Throttler
from core.http.types import Bool, Email, NonBlankStr, Str

from . import reset

session_api = Api("session", __name__, url_prefix="/session", auth="public")
health_api = Api("health", __name__, url_prefix="/health", auth="public")


class Login(Params):
    username: NonBlankStr
    password: NonBlankStr
    remember: Bool | None = None


class PasswordCheck(Params):
    password: Str


class ForgotPassword(Params):
    email: Email


class ResetPassword(Params):
    token: NonBlankStr
    password: NonBlankStr


class ResetToken(Params):
    token: NonBlankStr


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


# Keys Metabase's clients read from the properties whose setting a feature plugin owns: their value
# while no loaded plugin declares them (the sign-in plugin disabled, say), so the key is never missing.
# Without plugins/sso there is no single sign-on, so passwords are the way in (Metabase's getter says the same).
CLIENT_KEYS_WITHOUT_OWNER = {"ldap-enabled": False, "google-auth-client-id": None, "google-auth-enabled": False,
                             "enable-password-login": True}


@session_api.get("/properties")
def properties():
    """Every setting the caller may read, with the server's version and engines."""
    user = auth.current_user()
    visibility = "public" if user is None else ("admin" if user.is_superuser else "authenticated")
    return {**CLIENT_KEYS_WITHOUT_OWNER, **auth.tessera().settings.properties(db.session(), visibility)}


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


@health_api.get("/scheduler")
def scheduler_health():
    """This instance's scheduler process (core.schedule.supervisor): 200 while it runs (or when jobs are
    left to `tessera worker` processes), 503 while a dead one waits to be restarted. /api/health keeps
    Metabase's exact body, which clients compare."""
    from core.schedule.service import health
    from core.schedule.supervisor import FAILING

    detail = health(current_app.config)  # the serving command puts the status file's path there
    return json_response(detail, status=503 if detail["status"] in FAILING else 200)


def _throttle(name: str, key: str, threshold: int) -> None:
    state = auth.tessera()
    throttler = state.throttlers.setdefault(name, Throttler(name, threshold=threshold, field="email"))
    throttler.check(state.db.engine, key)


@session_api.post("/forgot_password", body=ForgotPassword, status=204)
def forgot_password(body: ForgotPassword):
    """E-mail a password-reset link; answers the same whether or not the address has an account."""
    if not auth.tessera().config["TESSERA_DISABLE_SESSION_THROTTLE"]:
        _throttle("forgot-password-email", body.email.strip().lower(), 10)
        if request.remote_addr:
            _throttle("forgot-password-ip", request.remote_addr, 50)
    reset.forgot_password(db.session(), auth.tessera().settings, body.email, request.host_url)


@session_api.get("/password_reset_token_valid", query=ResetToken)
def password_reset_token_valid(query: ResetToken):
    """Whether a reset (or invitation) token can still be used."""
    return {"valid": reset.token_valid(db.session(), query.token)}


@session_api.post("/reset_password", body=ResetPassword)
def reset_password(body: ResetPassword):
    """Set a new password with a reset token; logs the user in (every other session ends)."""
    token = reset.reset_password(db.session(), body.token, body.password)
    return auth.set_session_cookies(json_response({"success": True, "session_id": token}), token)
