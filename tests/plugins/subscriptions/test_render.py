"""The e-mail body of one card (plugins.subscriptions.render): single-number displays write the number the
app draws, from the same column and with the same formatting (core.charts.displays.scalar.number_text)."""
from __future__ import annotations

from core.appdb.models import Card
from plugins.subscriptions.render import render

COLS = [{"name": "CREATED_AT", "display_name": "Created At", "base_type": "type/DateTime", "unit": "month"},
        {"name": "count", "display_name": "Count", "base_type": "type/Integer"},
        {"name": "sum", "display_name": "Sum", "base_type": "type/Float"}]
ROWS = [["2024-01-01T00:00:00Z", 1234567, 10.5], ["2024-02-01T00:00:00Z", 7654321, 20.25]]


def body(display: str, settings: dict) -> str:
    card = Card(id=1, name="Orders", display=display, visualization_settings=settings)
    result = {"status": "completed", "row_count": len(ROWS), "data": {"cols": COLS, "rows": ROWS}}
    output = render(card, result, settings=settings)
    assert output.kind == "scalar"
    return output.html


def test_a_scalar_writes_its_chosen_column_formatted():
    assert "1,234,567" in body("scalar", {"scalar.field": "count"})
    text = body("scalar", {"column_settings": {'["name","sum"]': {"prefix": "$", "decimals": 2}}})
    assert "$10.50" in text and "1234567" not in text  # the last numeric column, with its settings


def test_a_smartscalar_writes_the_last_period():
    text = body("smartscalar", {"scalar.field": "count"})
    assert "7,654,321" in text and "1,234,567" not in text
