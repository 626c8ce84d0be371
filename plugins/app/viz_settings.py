"""Visualizing a question (issue 31, item 3): the display picker and the settings panel of the question
pages, and the route that applies a change.

The picker offers the displays core.charts.sensible says suit the result. The panel edits Metabase's
`visualization_settings` keys (graph.dimensions/metrics, stackable.stack_type, graph.show_goal/goal_value/
goal_label, graph.show_trendline, graph.show_values, graph.{x,y}_axis.title_text and .scale,
series_settings colours, column_settings number/date formats, table.columns, table.column_formatting);
core.charts draws them, so the page, its downloads, exports and e-mails show the same chart.

A change is a GET of /question/viz with the question (`q`, the ad-hoc question's base64, or `card`, a
saved question's id) and the panel's fields: it answers a 303 to the ad-hoc question with the new display
and settings (/question/adhoc?q=...), so the state lives in the URL, survives a reload, and is what a
save stores. A saved question changed this way becomes an ad-hoc view of it (`original_card_id` kept).
Only what the form says changes: settings it does not show are kept as they were.

The dashboard editor draws the same panel for a dashboard card (`panel(..., dashcard=)`) inside its own
form and reads it with `applied` into the card's overrides (dashboard_edit.restyle).
"""
from __future__ import annotations

import base64
import re

import orjson
from flask import redirect, request
from werkzeug.datastructures import MultiDict

from core.charts.conditional import OPERATORS, rgb, rules
from core.charts.displays.graph import stack_type
from core.charts.displays.series import build_graph, graph_columns
from core.charts.displays.table import HIDDEN_COLUMNS, visible_columns
from core.charts.format import CURRENCIES, is_number
from core.charts.registry import DISPLAYS
from core.charts.render import chart_input
from core.charts.sensible import NAMES, sensible_displays
from core.export.formatting import is_temporal

from .question_query import BadLink, decode_adhoc
from .render import page, read, signed_in_user
from .views import blueprint, id_of

GRAPHS = ("bar", "line", "area", "combo", "row")
STACKING = ("bar", "area", "combo")
SCALES = ("linear", "log", "pow")
X_SCALES = ("timeseries", "ordinal", "linear", "log", "pow")
NUMBER_STYLES = (("", "Normal"), ("decimal", "Number"), ("percent", "Percent"), ("scientific", "Scientific"),
                 ("currency", "Currency"))
DATE_STYLES = ("MMMM D, YYYY", "D MMMM, YYYY", "dddd, MMMM D, YYYY", "M/D/YYYY", "D/M/YYYY", "YYYY/M/D")
TIME_ENABLED = (("", "Default (minutes)"), ("none", "No time"), ("minutes", "Minutes"), ("seconds", "Seconds"),
                ("milliseconds", "Milliseconds"))
OPERATOR_NAMES = {"=": "is equal to", "!=": "is not equal to", "<": "is less than", ">": "is greater than",
                  "<=": "is at most", ">=": "is at least", "is-null": "is empty", "not-null": "is not empty",
                  "contains": "contains", "does-not-contain": "does not contain", "starts-with": "starts with",
                  "ends-with": "ends with", "is-true": "is true", "is-false": "is false"}
TEXT_LIMIT = 200
PANEL_KEYS = ("series_settings", "column_settings", "table.columns", "table.column_formatting")


class BadSettings(ValueError):
    """A field the panel cannot mean (a colour that is not #rrggbb, a goal that is not a number)."""


# -- the question in a link ------------------------------------------------------------------------------

def encode(question: dict) -> str:
    """A question as an ad-hoc link carries it (URL-safe base64 of its JSON, as decode_adhoc reads)."""
    return base64.urlsafe_b64encode(orjson.dumps(question)).decode("ascii").rstrip("=")


def original_card_id(text: str) -> int | None:
    """The saved question an ad-hoc link was made from, when it says (decode_adhoc keeps no other keys)."""
    try:
        raw = text.strip().replace(" ", "+").encode("ascii").replace(b"-", b"+").replace(b"_", b"/")
        value = orjson.loads(base64.b64decode(raw + b"=" * (-len(raw) % 4)))
    except (UnicodeEncodeError, ValueError):
        return None
    found = value.get("original_card_id") if isinstance(value, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def question_of(args: MultiDict) -> dict:
    """The question a change starts from: the ad-hoc link's, or a saved card's as the API shows it."""
    if args.get("card"):
        card = read(f"/api/card/{id_of(args['card'])}", ignore_view=True)
        return {"dataset_query": card.get("dataset_query") or {}, "display": card.get("display") or "table",
                "visualization_settings": dict(card.get("visualization_settings") or {}),
                "name": card.get("name"), "original_card_id": card.get("id")}
    question = decode_adhoc(args.get("q", ""))
    original = original_card_id(args.get("q", ""))
    question = {**question, "visualization_settings": dict(question["visualization_settings"])}
    if question.get("name") is None:
        question.pop("name")
    return {**question, "original_card_id": original} if original is not None else question


# -- the route -------------------------------------------------------------------------------------------

@blueprint.get("/question/viz")
def change():
    user = signed_in_user()
    try:
        question = changed(question_of(request.args), request.args)
    except (BadLink, BadSettings) as exc:
        return page("app/question.html", name="question", title="This question cannot be shown", user=user,
                    status=400, bad=str(exc))
    view = request.args.get("view")
    # A display of rows or a number shows as such; a chart chosen from the picker is shown as a chart.
    target = f"/question/adhoc?q={encode(question)}"
    if view in ("chart", "table") and not request.args.get("display"):
        target += f"&view={view}"
    return redirect(target, code=303)


def changed(question: dict, args: MultiDict) -> dict:
    """`question` with the picker's display (`display`) and the panel's fields (`form=1`) applied; the
    question pages' route and the SQL editor's run (native_editor.py) both change a question here."""
    display = args.get("display") or question["display"]
    if display not in DISPLAYS:
        raise BadSettings(f"“{display}” is not a display Tessera draws.")
    settings = question["visualization_settings"]
    if args.get("form"):
        settings = applied(settings, args, display)
    return {**question, "display": display, "visualization_settings": settings}


def _text(args: MultiDict, key: str) -> str | None:
    value = (args.get(key) or "").strip()
    if len(value) > TEXT_LIMIT:
        raise BadSettings("A setting's text is at most 200 characters.")
    return value or None


def _put(settings: dict, key: str, value) -> None:
    if value is None:
        settings.pop(key, None)
    else:
        settings[key] = value


def _number(text: str | None, what: str):
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadSettings(f"The {what} is a number.") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise BadSettings(f"The {what} is a number.")
    return int(value) if value == int(value) else value


def _color(text: str | None, what: str) -> str | None:
    if text is None:
        return None
    if rgb(text) is None:
        raise BadSettings(f"The {what} is a colour written #rrggbb.")
    return text


def _choice(args: MultiDict, key: str, allowed, what: str):
    value = args.get(key) or None
    if value is not None and value not in allowed:
        raise BadSettings(f"The {what} is one of {', '.join(a for a in allowed if a)}.")
    return value


def applied(settings: dict, args: MultiDict, display: str) -> dict:
    """`settings` with the panel's fields applied: each section the form drew (named in `sections`)
    replaces the keys it shows; everything else stays."""
    out = dict(settings)
    sections = set(args.getlist("sections"))
    if "graph" in sections:
        _apply_graph(out, args)
    if "series" in sections:
        _apply_series(out, args)
    if "columns" in sections:
        _apply_columns(out, args)
    if "table" in sections:
        _apply_table(out, args)
    if "rules" in sections:
        _apply_rules(out, args)
    return out


def _apply_graph(out: dict, args: MultiDict) -> None:
    names = args.getlist("cols")
    x, breakout = args.get("graph.x") or None, args.get("graph.breakout") or None
    metrics = [m for m in args.getlist("graph.metrics") if m in names]
    if x is not None and x not in names or breakout is not None and breakout not in names:
        raise BadSettings("The x axis and the breakout are columns of the result.")
    if x is not None:
        out["graph.dimensions"] = [x, breakout] if breakout and breakout != x else [x]
    if metrics:
        out["graph.metrics"] = metrics
    stack = _choice(args, "stackable.stack_type", ("none", "stacked", "normalized"), "stacking")
    # Written only when changed: the select shows the effective value, and a default stored as a choice
    # would stop following the display (an area of several series stacks by default).
    if stack is not None and stack != args.get("was.stackable.stack_type"):
        out["stackable.stack_type"] = None if stack == "none" else stack
        out.pop("stackable.stacked", None)
    for key in ("graph.show_goal", "graph.show_trendline", "graph.show_values"):
        _put(out, key, True if args.get(key) else None)
    _put(out, "graph.goal_value", _number(_text(args, "graph.goal_value"), "goal"))
    _put(out, "graph.goal_label", _text(args, "graph.goal_label"))
    if out.get("graph.goal_value") is None and out.get("graph.show_goal"):
        raise BadSettings("A goal line needs a goal value.")
    for axis in ("x", "y"):
        _put(out, f"graph.{axis}_axis.title_text", _text(args, f"graph.{axis}_axis.title_text"))
    y_scale = _choice(args, "graph.y_axis.scale", SCALES, "y axis scale")
    # Linear, the default the select shows when nothing is set, is not written as a setting.
    _put(out, "graph.y_axis.scale", None if y_scale == "linear" and not out.get("graph.y_axis.scale") else y_scale)
    _put(out, "graph.x_axis.scale", _choice(args, "graph.x_axis.scale", X_SCALES, "x axis scale"))


def _apply_series(out: dict, args: MultiDict) -> None:
    series = {key: dict(value) for key, value in (out.get("series_settings") or {}).items()
              if isinstance(value, dict)}
    shown = args.getlist("series.was")
    for position, (key, color) in enumerate(zip(args.getlist("series.key"), args.getlist("series.color"))):
        chosen = _color(color.strip() or None, f"colour of “{key}”")
        # Only a colour the person changed is stored: the theme's own colours differ by theme.
        if chosen is not None and (position >= len(shown) or chosen.lower() != shown[position].lower()):
            series.setdefault(key, {})["color"] = chosen
    _put(out, "series_settings", {key: value for key, value in series.items() if value} or None)


def _apply_columns(out: dict, args: MultiDict) -> None:
    stored = {key: dict(value) for key, value in (out.get("column_settings") or {}).items()
              if isinstance(value, dict)}
    for index, name in enumerate(args.getlist("cols")):
        key = '["name",' + orjson.dumps(name).decode() + "]"
        entry = stored.get(key, {})
        field = f"col.{index}."
        if args.get(field + "kind") == "number":
            _put(entry, "number_style", _choice(args, field + "number_style", [s for s, _ in NUMBER_STYLES],
                                                "number style"))
            decimals = _number(_text(args, field + "decimals"), "number of decimals")
            if decimals is not None and (not isinstance(decimals, int) or not 0 <= decimals <= 10):
                raise BadSettings("Decimals are a whole number from 0 to 10.")
            _put(entry, "decimals", decimals)
            _put(entry, "prefix", _text(args, field + "prefix"))
            _put(entry, "suffix", _text(args, field + "suffix"))
            _put(entry, "currency", _choice(args, field + "currency", CURRENCIES, "currency"))
        elif args.get(field + "kind") == "date":
            _put(entry, "date_style", _choice(args, field + "date_style", DATE_STYLES, "date style"))
            time = _choice(args, field + "time_enabled", [t for t, _ in TIME_ENABLED], "time")
            entry.pop("time_enabled", None)
            if time is not None:
                entry["time_enabled"] = None if time == "none" else time
        else:
            continue
        if entry:
            stored[key] = entry
        else:
            stored.pop(key, None)
    _put(out, "column_settings", stored or None)


def _apply_table(out: dict, args: MultiDict) -> None:
    order = args.getlist("table.column")
    enabled = set(args.getlist("table.enabled"))
    move = re.fullmatch(r"(\d+):(up|down)", args.get("move") or "")
    if move:
        index = int(move.group(1))
        other = index - 1 if move.group(2) == "up" else index + 1
        if 0 <= index < len(order) and 0 <= other < len(order):
            order[index], order[other] = order[other], order[index]
    columns = [{"name": name, "enabled": name in enabled} for name in order]
    # The table as it shows without the setting is not written as one (a dashboard card's override of
    # another setting stays that alone).
    default = [{"name": name, "enabled": name not in HIDDEN_COLUMNS} for name in args.getlist("cols")]
    if order and (out.get("table.columns") is not None or columns != default):
        out["table.columns"] = columns


def _apply_rules(out: dict, args: MultiDict) -> None:
    kept = rules(out)
    remove = args.get("remove_rule")
    if remove is not None and remove.isdigit() and int(remove) < len(kept):
        kept.pop(int(remove))
    if args.get("add_rule"):
        column = args.get("rule.column")
        if column not in args.getlist("cols"):
            raise BadSettings("Choose a column for the rule.")
        if args.get("rule.type") == "range":
            kept.append({"type": "range", "columns": [column], "colors": [
                _color(_text(args, "rule.low") or "#ffffff", "low colour"),
                _color(_text(args, "rule.high") or "#509ee3", "high colour")],
                "min_type": None, "max_type": None})
        else:
            operator = _choice(args, "rule.operator", OPERATORS, "comparison") or "="
            value = _text(args, "rule.value")
            number = None
            if value is not None and operator in ("=", "!=", "<", ">", "<=", ">="):
                try:
                    number = _number(value, "value")
                except BadSettings:
                    if operator not in ("=", "!="):
                        raise
            kept.append({"type": "single", "columns": [column], "operator": operator,
                         "value": number if number is not None else (value or ""),
                         "color": _color(_text(args, "rule.color") or "#ed6e6e", "rule's colour"),
                         "highlight_row": bool(args.get("rule.highlight_row"))})
    _put(out, "table.column_formatting", kept or None)


# -- the panel -------------------------------------------------------------------------------------------

def governs(key: str) -> bool:
    """Whether the panel edits this visualization_settings key (a dashboard card's reset drops these)."""
    return key.startswith(("graph.", "stackable.")) or key in PANEL_KEYS


def panel(card: dict, result, *, q: str | None = None, card_id: int | None = None, view: str | None = None,
          editor: bool = False, dashcard: int | None = None, apply: str | None = None):
    """What app/_viz_settings.html draws for a question whose result is `result` (the API's answer
    body), or None when it cannot be changed here (no result, or a saved question its user may not
    run ad hoc or that takes parameters: its ad-hoc view could not run). With `editor` the SQL editor
    draws it: its script sends each change with the editor's next run instead of to /question/viz.
    With `dashcard` the dashboard editor draws it inside its form for that card (`card` carrying the
    dashcard's settings over the question's), each change posted with the form to `apply`; no display
    picker and no Data section there (a dashboard card keeps its question's display and columns)."""
    if not isinstance(result, dict) or not isinstance(result.get("data"), dict):
        return None
    if card_id is not None and (not card.get("can_run_adhoc_query") or card.get("parameters")):
        return None
    display = str(card.get("display") or "table")
    settings = card.get("visualization_settings") if isinstance(card.get("visualization_settings"), dict) else {}
    chart = chart_input({"display": display, "visualization_settings": settings}, result)
    cols = chart.cols
    base = {"card": card_id} if card_id is not None else {"q": q} if dashcard is None else {}
    offered = [] if dashcard is not None else sensible_displays(cols, chart.row_count)
    if dashcard is None and display not in offered and display in NAMES:
        offered.append(display)
    names = [str(c.get("name")) for c in cols]
    context = {"base": base, "view": view, "display": display, "names": names, "editor": editor,
               "dashcard": dashcard, "apply": apply,
               "picker": [{"name": name, "label": NAMES[name], "current": name == display,
                           "url": "/question/viz?" + _query({**base, "display": name})} for name in offered],
               "cols": [_column(index, col, settings) for index, col in enumerate(cols)],
               "graph": _graph(chart) if display in GRAPHS else None,
               "table": _table(cols, settings), "rules": _rules(settings, cols),
               "operators": [(o, OPERATOR_NAMES[o]) for o in OPERATORS], "number_styles": NUMBER_STYLES,
               "currencies": sorted(CURRENCIES), "date_styles": DATE_STYLES, "time_enabled": TIME_ENABLED,
               "scales": SCALES, "x_scales": X_SCALES}
    return context


def _query(values: dict) -> str:
    from urllib.parse import urlencode

    return urlencode([(key, value) for key, value in values.items() if value is not None])


def _column(index: int, col: dict, settings: dict) -> dict:
    key = '["name",' + orjson.dumps(col.get("name")).decode() + "]"
    stored = ((settings.get("column_settings") or {}).get(key)) or {}
    kind = "number" if is_number(col) else "date" if is_temporal(col) else None
    time = stored.get("time_enabled", "") if "time_enabled" in stored else ""
    return {"index": index, "name": str(col.get("name")), "label": col.get("display_name") or col.get("name"),
            "kind": kind, "settings": {**stored, "time_enabled": "none" if time is None else time}}


def _graph(chart) -> dict | None:
    dimensions, metrics = graph_columns(chart)
    graph = build_graph(chart)
    return {"x": chart.cols[dimensions[0]].get("name") if dimensions else None,
            "breakout": chart.cols[dimensions[1]].get("name") if len(dimensions) > 1 else None,
            "metrics": [chart.cols[m].get("name") for m in metrics],
            "numbers": [str(c.get("name")) for i, c in enumerate(chart.cols) if chart.is_number(i)],
            "stackable": chart.display in STACKING,
            "stack": (stack_type(chart, graph) if graph else None) or "none",
            "x_scale_offered": chart.display in ("line", "area"),
            "series": [{"key": one.key, "title": one.title, "color": one.color if rgb(one.color) else "#509ee3"}
                       for one in (graph.series if graph else [])][:20],
            "settings": chart.settings}


def _table(cols: list[dict], settings: dict) -> list[dict]:
    shown = visible_columns(cols, settings)
    order = shown + [i for i in range(len(cols)) if i not in shown]
    return [{"name": str(cols[i].get("name")), "label": cols[i].get("display_name") or cols[i].get("name"),
             "enabled": i in shown} for i in order]


def _rules(settings: dict, cols: list[dict]) -> list[dict]:
    """The stored rules in words, with their colours (swatches), columns by the names people read."""
    labels = {str(c.get("name")): str(c.get("display_name") or c.get("name")) for c in cols}
    described = []
    for rule in rules(settings):
        columns = ", ".join(labels.get(str(c), str(c)) for c in rule["columns"])
        if rule["type"] == "range":
            text = f"{columns}: shaded from the smallest to the largest value"
            colors = [c for c in (rule.get("colors") or [])[:2] if rgb(c)]
        else:
            operator = OPERATOR_NAMES.get(str(rule.get("operator")), str(rule.get("operator")))
            text = f"{columns} {operator} {rule.get('value', '')}".rstrip() + \
                (" (whole row)" if rule.get("highlight_row") else "")
            colors = [rule["color"]] if rgb(rule.get("color")) else []
        described.append({"text": text, "colors": colors})
    return described
