"""What the subscription editor shows before saving: the configured channels, a card as the e-mail
shows it (HTML page, JSON with the HTML, PNG) and a dashboard's cards. Each card runs as the caller."""
from __future__ import annotations

import html

from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.export.dashcard_settings import merged
from core.http.errors import Invalid, NotFound
from core.outbound import mail
from core.query.errors import QueryFailed

from . import channels, render, send, webhook_send
from .service import check_dashboard, readable_card

PREVIEW_WIDTH = 400
PAGE = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head><body style="margin:0;">{body}</body></html>'


def form_input(session: Session, registry) -> dict:
    return channels.form_input(mail.is_configured(registry, session), webhook_send.any_active(session))


def _run(session: Session, user: User, card_id: int) -> tuple[Card, dict]:
    card = readable_card(session, user, card_id)
    return card, render.run_card(session, user, card)


def card_page(session: Session, user: User, card_id: int) -> str:
    card, result = _run(session, user, card_id)
    return PAGE.format(title=html.escape(card.name or ""), body=render.render(card, result).html)


def card_info(session: Session, user: User, registry, card_id: int) -> dict:
    card, result = _run(session, user, card_id)
    output = render.render(card, result)
    site = (registry.get(session, "site-url") if "site-url" in registry.definitions else None) or ""
    cols, _ = render._cols_rows(result)
    return {"id": card.id, "pulse_card_type": output.kind, "pulse_card_html": output.html,
            "pulse_card_name": card.name, "pulse_card_url": f"{site.rstrip('/')}/question/{card.id}",
            "row_count": result.get("row_count", 0), "col_count": len(cols)}


def card_png(session: Session, user: User, card_id: int, width: int | None) -> bytes:
    card, result = _run(session, user, card_id)
    try:
        return render.card_png(card, result, min(width or PREVIEW_WIDTH, 4000))
    except QueryFailed as exc:
        raise Invalid(exc.message if hasattr(exc, "message") else str(exc)) from None


def dashboard_page(session: Session, user: User, dashboard_id: int) -> str:
    """The dashboard's cards (its default filter values applied) and texts, in reading order."""
    check_dashboard(session, user, dashboard_id)
    content = send.dashboard_content(session, dashboard_id, [])
    if content is None:
        raise NotFound()
    pieces = []
    for part in content.parts:
        card = session.get(Card, part.card_id) if part.card_id is not None else None
        if card is not None and not card.archived:
            result = render.run_card(session, user, card, list(part.parameters))
            settings = merged(card.visualization_settings, part.visualization_settings)
            pieces.append(render.render(card, result, settings=settings).html)
        elif part.text:
            pieces.append(f"<p>{html.escape(part.text)}</p>")
    body = f'<h2>{html.escape(content.name)}</h2>' + "".join(pieces)
    return PAGE.format(title=html.escape(content.name), body=body)
