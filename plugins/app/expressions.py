"""The custom expression language of the question builder (Metabase's notebook): custom columns, custom
aggregations and custom filters, written as `[Total] - [Tax]`, `case([Total] > 50, "big", "small")`,
`Sum([Total]) / Count`, `contains([Name], "abc") AND NOT isNull([Email])`, `[Product → Category]`,
turned into the legacy MBQL clause the API runs, and back.

Python interface (this module; the pieces are expressions_grammar / _parser / _format / _complete /
_columns, the routes expressions_views):

    columns = columns_of(dataset_query, kind, exclude=None)   # display name -> MBQL ref, read via the API
        # (a dict; its `types` maps names to base types, which parse uses to refuse a sum of text)
    clause = parse(text, kind, columns)   # kind: "expression" | "aggregation" | "filter"
        # -> the MBQL clause; raises ExpressionError(message, start, end) (character offsets of `text`)
    text = format(clause, columns)        # -> the text; raises Unprintable for a clause it cannot write
        # (a named aggregation's name and a value's options are not part of the text: keep them aside)
    complete(text, cursor, kind, columns) # -> [Suggestion(kind, label, insert, start, end, signature,
                                          #      description)]: replace text[start:end] with `insert`

Editor component (templates/app/_expression_editor.html, static/expression.js, static/expression.css):

    {% from "app/_expression_editor.html" import expression_editor %}
    {{ expression_editor(id="total-less-tax", label="Formula", kind="expression", query=<base64 of the
                         dataset_query>, field="expression", text="", name="") }}

It draws a labelled input with an autocomplete list (arrows move, Enter or Tab accept, Escape closes),
checks the text on the server as it is typed (htmx, 300 ms after the last key) and shows the error under
the input with the wrong part marked. While the text is valid, the editor holds
`<input type="hidden" name="{field}" value="<the MBQL clause as JSON>">`, inside the form the editor is
in; it is absent while the text is not valid. `name` is the custom column's own name when editing one
(it is not offered as a column of itself; a summary's name is not needed). The page needs
`/app/assets/expression.js` and `expression.css` in its head. An editor can also be fetched as a
fragment: GET /question/notebook/expression/editor?q=&kind=&id=&label=&field=&text=&name=, or with
`clause=<MBQL as JSON>` instead of `text` to edit a clause the query holds (printed by `format`).

Routes (expressions_views.py), each reading the query's columns through the API as the signed-in user:
- POST /question/notebook/expression/validate {q, kind, text, field, name} -> the message fragment:
  the error with the text's wrong part marked, or the hidden input with the MBQL. The clause is also
  compiled by the API (POST /api/dataset/native with the clause in the query) so a type error the API
  finds (a sum of text, a unit a database lacks) is shown too.
- POST /question/notebook/expression/complete {q, kind, text, cursor, name, id} -> the suggestion list
  fragment (options with ids `<id>-option-<n>`). Both take JSON bodies (the query may not fit a URL).
A query that is not base64 JSON of an MBQL query, or an unknown kind, is a 400 `_form_error.html`.
"""
from __future__ import annotations

from .expressions_columns import Columns, ColumnsError, columns_of
from .expressions_complete import Suggestion, complete
from .expressions_format import Unprintable, format_expression
from .expressions_grammar import FUNCTIONS, ExpressionError
from .expressions_parser import KINDS, parse


def format(clause, columns: dict) -> str:  # noqa: A001 - the interface's name for printing
    """The expression text of an MBQL clause, naming columns as `columns` does."""
    return format_expression(clause, columns)


__all__ = ["FUNCTIONS", "KINDS", "Columns", "ColumnsError", "ExpressionError", "Suggestion", "Unprintable", "columns_of",
           "complete", "format", "parse"]
