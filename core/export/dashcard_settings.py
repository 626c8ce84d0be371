"""A dashboard card's visualization settings over its saved question's: how they combine (Metabase's
mergeSettings; the app's pages and previews, dashcard downloads and the public pages' script combine them
so) and its inverse, the overrides a dashcard stores so that it shows given settings while the question
keeps its own (the dashboard editor's visualization settings panel).

Combining: a dashcard's key replaces the card's, except `column_settings` and `series_settings`, merged
entry by entry and, inside an entry, key by key; and `table.columns`, whose order and on/off come from
the dashcard for the columns the card still lists (a column the card gained since is added at the end).
The inverse stores only what differs; a key the card has that the shown settings lack is stored as null,
which every reader of settings takes as unset.
"""
from __future__ import annotations

NESTED = ("column_settings", "series_settings")


def merged(card_settings, over) -> dict:
    """The card's settings with the dashcard's (`over`) laid over them."""
    base = card_settings if isinstance(card_settings, dict) else {}
    if not isinstance(over, dict) or not over:
        return dict(base)
    out = {**base, **over}
    for key in NESTED:
        first, second = base.get(key), over.get(key)
        if isinstance(first, dict) and isinstance(second, dict):
            out[key] = {name: {**_entry(first.get(name)), **_entry(second.get(name))} for name in {**first, **second}}
    first, second = base.get("table.columns"), over.get("table.columns")
    if isinstance(first, list) and isinstance(second, list):
        listed = [_name(c) for c in first]
        kept = [c for c in second if _name(c) in listed]
        taken = {_name(c) for c in kept}
        out["table.columns"] = kept + [c for c in first if _name(c) not in taken]
    return out


def overrides(card_settings, shown: dict) -> dict:
    """What a dashcard stores so that merged(card_settings, it) shows `shown`: the keys that differ."""
    base = card_settings if isinstance(card_settings, dict) else {}
    out = {}
    for key in {**base, **shown}:
        first, second = base.get(key), shown.get(key)
        if key in NESTED and isinstance(first, dict) and isinstance(second, dict):
            entries = {}
            for name in {**first, **second}:
                a, b = _entry(first.get(name)), _entry(second.get(name))
                changed = {k: b.get(k) for k in {**a, **b} if a.get(k) != b.get(k)}
                if changed:
                    entries[name] = changed
            if entries:
                out[key] = entries
        elif first != second:
            out[key] = second
    return out


def _entry(value) -> dict:
    return value if isinstance(value, dict) else {}


def _name(column):
    return column.get("name") if isinstance(column, dict) else column
