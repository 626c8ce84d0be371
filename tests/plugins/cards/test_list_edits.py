"""GET /api/card and GET /api/dashboard/ show each item's last-edit-info, read for the whole list in one
statement: the statements a list runs do not grow with its length, and each item shows its own latest
editor."""
from __future__ import annotations

from tests.test_reads_write_nothing import AppDbStatements

from .fixtures import card_body, native_query


def _revision_reads(app, client, path: str) -> tuple[list[dict], int]:
    with AppDbStatements(app) as seen:
        response = client.get(path)
    assert response.status_code == 200, response.json
    return response.json, sum("FROM revision" in s for s in seen.statements)


def test_each_listed_card_and_dashboard_shows_its_own_last_edit_in_one_read(app, admin, user, warehouse):
    cards = [user.post("/api/card", json=card_body(f"Card {n}", native_query(warehouse["db"], "SELECT 1 AS x"))).json
             for n in range(2)]
    boards = [user.post("/api/dashboard", json={"name": f"Board {n}"}).json for n in range(2)]
    _, card_reads_of_two = _revision_reads(app, admin, "/api/card")
    _, board_reads_of_two = _revision_reads(app, admin, "/api/dashboard/")
    cards += [user.post("/api/card", json=card_body(f"Card {n}", native_query(warehouse["db"], "SELECT 1 AS x"))).json
              for n in range(2, 6)]
    boards += [user.post("/api/dashboard", json={"name": f"Board {n}"}).json for n in range(2, 6)]
    assert admin.put(f"/api/card/{cards[1]['id']}", json={"name": "Card 1 renamed"}).status_code == 200
    assert admin.put(f"/api/dashboard/{boards[1]['id']}", json={"name": "Board 1 renamed"}).status_code == 200

    listed_cards, card_reads = _revision_reads(app, admin, "/api/card")
    listed_boards, board_reads = _revision_reads(app, admin, "/api/dashboard/")
    assert card_reads == card_reads_of_two <= 1 and board_reads == board_reads_of_two <= 1
    for listed, path in ((listed_cards, "/api/card/{}"), (listed_boards, "/api/dashboard/{}")):
        assert len(listed) == 6
        for item in listed:
            editor = "admin@example.com" if item["name"].endswith("renamed") else "user@example.com"
            assert item["last-edit-info"]["email"] == editor, item
            assert item["last-edit-info"] == admin.get(path.format(item["id"])).json["last-edit-info"]
