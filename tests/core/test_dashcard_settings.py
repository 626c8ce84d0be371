"""A dashboard card's visualization settings over its card's (core/export/dashcard_settings.py): Metabase's
mergeSettings cases, and overrides as its inverse (what the dashboard editor stores)."""
from __future__ import annotations

from core.export.dashcard_settings import merged, overrides


def test_keys_are_replaced_and_column_and_series_settings_merged_entry_by_entry():
    assert merged({"foo": {"a": 1}, "bar": {"b": 1}}, {"foo": {"c": 1}}) == {"foo": {"c": 1}, "bar": {"b": 1}}
    for key in ("column_settings", "series_settings"):
        assert merged({key: {"one": {"x": 1, "y": 2}}}, {key: {"one": {"x": 3}, "two": {"z": 4}}}) == {
            key: {"one": {"x": 3, "y": 2}, "two": {"z": 4}}}
    assert merged({}, {"column_settings": {"one": {"x": 1}}}) == {"column_settings": {"one": {"x": 1}}}
    assert merged(None, None) == {} and merged({"a": 1}, {}) == {"a": 1}


def test_table_columns_follow_the_dashcard_for_the_columns_the_card_still_has():
    a, b, c, d = ({"name": n, "enabled": True} for n in "abcd")
    assert merged({"table.columns": [a, b]}, {"table.columns": [a, b, c]}) == {"table.columns": [a, b]}
    assert merged({"table.columns": [a, b, d]}, {"table.columns": [a, b]}) == {"table.columns": [a, b, d]}
    off = {**a, "enabled": False}
    assert merged({"table.columns": [a, b, d]}, {"table.columns": [d, off, b, c]}) == {"table.columns": [d, off, b]}


def test_overrides_keep_only_what_differs_and_merge_back_to_what_was_shown():
    card = {"graph.show_goal": True, "graph.goal_value": 10, "column_settings": {"x": {"decimals": 2, "prefix": "$"}},
            "table.columns": [{"name": "x", "enabled": True}]}
    shown = {"graph.goal_value": 20, "graph.goal_label": "Target",
             "column_settings": {"x": {"decimals": 2}, "y": {"suffix": "%"}},
             "table.columns": [{"name": "x", "enabled": True}]}
    over = overrides(card, shown)
    assert over == {"graph.show_goal": None, "graph.goal_value": 20, "graph.goal_label": "Target",
                    "column_settings": {"x": {"prefix": None}, "y": {"suffix": "%"}}}
    back = merged(card, over)
    assert {k: v for k, v in back.items() if v is not None} == {**shown, "column_settings": {
        "x": {"decimals": 2, "prefix": None}, "y": {"suffix": "%"}}}
    assert overrides(card, merged(card, {})) == {}
