"""/api/util endpoints."""
from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.types import NonBlankStr, Str

from . import service

# Metabase mounts /api/util without its auth wrapper; each endpoint sets its own gate.
util_api = Api("util", __name__, url_prefix="/util", auth="public")


class PasswordCheck(Params):
    password: Str


class EntityIds(Params):
    entity_ids: dict[str, list[Str]]


class Feedback(Params):
    comments: NonBlankStr | None = None
    source: NonBlankStr
    email: NonBlankStr | None = None


@util_api.get("/random_token")
def random_token():
    """A cryptographically secure 32-byte token, as 64 hex characters (for embedding-secret-key)."""
    return {"token": service.random_token()}


@util_api.post("/password_check", body=PasswordCheck)
def password_check(body: PasswordCheck):
    """Check a password against the configured complexity rules and the common-password list."""
    auth.check_password_rules(body.password)
    return {"valid": True}


@util_api.get("/bug_report_details", auth="superuser")
def bug_report_details():
    """Version and system information for a bug report."""
    return service.bug_report_details(auth.tessera(), db.session())


@util_api.get("/logs", auth="superuser")
def logs():
    """Recent server log lines, newest first."""
    return auth.tessera().logs.recent()


@util_api.get("/stats", auth="superuser")
def stats():
    """Anonymous usage statistics: counts only."""
    return service.stats(db.session())


@util_api.get("/diagnostic_info/connection_pool_info", auth="superuser")
def connection_pool_info():
    """Connection-pool counts of the app DB and every connected database."""
    return service.pool_info(auth.tessera())


@util_api.post("/entity_id", body=EntityIds, auth="user")
def entity_id(body: EntityIds):
    """Translate entity ids to numeric ids, per model."""
    return {"entity_ids": service.translate_entity_ids(db.session(), body.entity_ids)}


@util_api.post("/product-feedback", body=Feedback, status=204)
def product_feedback(body: Feedback):
    """Record product feedback in the server log, where administrators read it."""
    service.record_feedback(body.comments, body.source, body.email)
