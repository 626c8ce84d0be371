"""What every admin page shares: the section list of the admin navigation (templates/app/admin/_nav.html
draws it), drawing an admin page inside app/admin/layout.html, and turning an API refusal into the
`_form_error.html` fragment with the API's own words and status.

The admin pages decide nothing about who may do what: each reads and writes through the API
(core.http.internal), so a person who is not an administrator sees the API's 403 as the page's.
"""
from __future__ import annotations

import secrets
import string

from core.http.internal import Answer

from .render import page
from .views import blueprint, fragment

# (section key, label, path): every admin page of the app, including those other modules draw
# (databases and the data model are admin_data's, collection permissions the collections pages').
SECTIONS = (
    ("people", "People", "/admin/people"),
    ("groups", "Groups", "/admin/people/groups"),
    ("databases", "Databases", "/admin/databases"),
    ("datamodel", "Table metadata", "/admin/datamodel"),
    ("permissions-data", "Data permissions", "/admin/permissions/data"),
    ("permissions-collections", "Collection permissions", "/admin/permissions/collections"),
    ("settings", "Settings", "/admin/settings/general"),
    ("api-keys", "API keys", "/admin/settings/authentication/api-keys"),
    ("tasks", "Tasks", "/admin/tools/tasks"),
    ("jobs", "Jobs", "/admin/tools/jobs"),
)


@blueprint.context_processor
def admin_navigation() -> dict:
    """Every template may draw the admin navigation (app/admin/_nav.html): pages of other modules that call
    render.page themselves include it, given their `admin_section`."""
    return {"admin_sections": SECTIONS}


def admin_page(template: str, *, section: str, title: str, user, status: int = 200, **context):
    """An admin page: the app's frame, the admin navigation with `section` current, then `template`."""
    return page(template, name=f"admin-{section}", title=title, user=user, status=status, admin_section=section,
                **context)


def reason(answer: Answer) -> str:
    """The API's words for a refusal: a field's message when it names one, else its message."""
    body = answer.body if isinstance(answer.body, dict) else {}
    errors = body.get("errors") if isinstance(body.get("errors"), dict) else {}
    first = next(iter(errors.values()), None)
    if isinstance(first, str) and first:
        return first
    if answer.status == 403:
        return "You don't have permissions to do that."
    return answer.message or "The server refused the change."


def refused(answer: Answer):
    """The `_form_error.html` fragment for an API refusal, with the API's status (4xx; 5xx stays 5xx)."""
    return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 400,
                    message=reason(answer))


def bad_input(message: str):
    return fragment("app/_form_error.html", status=400, message=message)


def temporary_password() -> str:
    """A password an administrator hands on once (Metabase's manual reset): long and random, with every
    kind of character the complexity rules may ask for."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(14)) + secrets.choice("!@#$%^*-") + "a7Q"


def positive_id(value) -> int | None:
    """An id a form sent (a number or its text), or None when it is not a positive integer."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 2**63 else None
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value) or None
    return None
