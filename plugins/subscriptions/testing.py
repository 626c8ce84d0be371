"""POST /api/pulse/test: an unsaved pulse sent now to its e-mail and webhook channels, its cards run
as the caller."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.http.errors import Invalid
from core.outbound import mail

from . import send, webhook_send
from .service import check_dashboard, checked_channels, readable_card


def send_test(session: Session, user: User, registry, body: dict) -> dict:
    for ref in body["cards"]:
        readable_card(session, user, ref["id"])
    if body.get("dashboard_id") is not None:
        check_dashboard(session, user, body["dashboard_id"])
    normals = checked_channels(session, body["channels"])
    cards = [send.CardRef(r["id"], r["include_csv"], r["include_xls"], r["format_rows"], r["dashboard_card_id"])
             for r in body["cards"]]
    for normal in normals:
        if normal["channel_type"] == "http" and normal["enabled"]:
            delivery = send.Delivery(name=body["name"], creator=user, cards=cards, emails=[],
                                     skip_if_empty=bool(body.get("skip_if_empty")), dashboard_id=body.get("dashboard_id"))
            webhook_send.send(session, registry, delivery, normal["channel_id"], None)
        if normal["channel_type"] != "email" or not normal["enabled"]:
            continue
        users = list(session.scalars(select(User.email).where(User.id.in_(normal["user_ids"]),
                                                              User.is_active.is_(True)))) if normal["user_ids"] else []
        emails = list(dict.fromkeys(users + normal["details"].get("emails", [])))
        delivery = send.Delivery(name=body["name"], creator=user, cards=cards, emails=emails,
                                 skip_if_empty=bool(body.get("skip_if_empty")), dashboard_id=body.get("dashboard_id"))
        try:
            send.send(session, registry, delivery)
        except mail.MailNotConfigured as exc:
            raise Invalid(str(exc)) from None
        except mail.MailError as exc:
            raise Invalid(f"The e-mail could not be sent: {exc}") from None
    return {"ok": True}
