"""The custom expression language (plugins/app/expressions.py) without a server: text to the exact MBQL,
the MBQL printed back to text that parses to the same clause, errors with the place they point at,
suggestions, and the function table agreeing with the compiler's arity table."""
from __future__ import annotations

import pytest

from core.query.arity import ARITY
from plugins.app.expressions import FUNCTIONS, Columns, ExpressionError, Unprintable, complete, format, parse

TOTAL, TAX, CREATED, NAME, EMAIL = (["field", 6, None], ["field", 5, None], ["field", 8, None],
                                    ["field", 20, None], ["field", 21, None])
CATEGORY = ["field", 30, {"source-field": 3}]
JOINED = ["field", 31, {"join-alias": "Products"}]
COLUMNS = {"Total": TOTAL, "Tax": TAX, "Created At": CREATED, "Name": NAME, "Email": EMAIL,
           "Product → Category": CATEGORY, "Products → Price": JOINED, "First": ["field", 40, None],
           "Last": ["field", 41, None], "Odd [name]": ["field", 50, None], "Back\\slash": ["field", 51, None],
           "Net": ["expression", "Net"], "Big orders": ["segment", 7], "Revenue": ["metric", 9]}

CASES = [
    # (text, kind, MBQL)
    ("[Total] - [Tax]", "expression", ["-", TOTAL, TAX]),
    ("[Total] + [Tax] + 1", "expression", ["+", TOTAL, TAX, 1]),
    ("[Total] - ([Tax] - 1)", "expression", ["-", TOTAL, ["-", TAX, 1]]),
    ("([Total] - [Tax]) * 2", "expression", ["*", ["-", TOTAL, TAX], 2]),
    ("[Total] - [Tax] * 2", "expression", ["-", TOTAL, ["*", TAX, 2]]),
    ("[Total] / 2 / 4", "expression", ["/", TOTAL, 2, 4]),
    ("-[Total]", "expression", ["-", 0, TOTAL]),
    ("-5 + 2.5", "expression", ["+", -5, 2.5]),
    ("1.5e3 * -2", "expression", ["*", 1500.0, -2]),
    ("[Total] * -[Tax]", "expression", ["*", TOTAL, ["-", 0, TAX]]),
    ('case([Total] > 50, "big", "small")', "expression", ["case", [[[">", TOTAL, 50], "big"]], {"default": "small"}]),
    ('case([Total] > 50, "big", [Total] > 10, "medium")', "expression",
     ["case", [[[">", TOTAL, 50], "big"], [[">", TOTAL, 10], "medium"]]]),
    ('if([Total] > 50, 1, 0)', "expression", ["case", [[[">", TOTAL, 50], 1]], {"default": 0}]),
    ('concat([First], " ", [Last])', "expression", ["concat", ["field", 40, None], " ", ["field", 41, None]]),
    ('datetimeAdd([Created At], 1, "month")', "expression", ["datetime-add", CREATED, 1, "month"]),
    ('datetimeSubtract([Created At], 2, "Day")', "expression", ["datetime-subtract", CREATED, 2, "day"]),
    ('datetimeDiff([Created At], now, "day")', "expression", ["datetime-diff", CREATED, ["now"], "day"]),
    ("[Product → Category]", "expression", CATEGORY),
    ("[Product.Category]", "expression", CATEGORY),
    ("[product -> category]", "expression", CATEGORY),
    ("[products → price] * 2", "expression", ["*", JOINED, 2]),
    ("Total - Tax", "expression", ["-", TOTAL, TAX]),
    ("[Net] * 2", "expression", ["*", ["expression", "Net"], 2]),
    ('[Odd \\[name\\]] + 1', "expression", ["+", ["field", 50, None], 1]),
    ('length([Back\\\\slash])', "expression", ["length", ["field", 51, None]]),
    ('"a\\"b\\\\c\\n" = [Name]', "filter", ["=", "a\"b\\c\n", NAME]),
    ("'single' = [Name]", "filter", ["=", "single", NAME]),
    ('substring([Name], 1, 3)', "expression", ["substring", NAME, 1, 3]),
    ('coalesce([Email], [Name], "none")', "expression", ["coalesce", EMAIL, NAME, "none"]),
    ('week([Created At], "iso")', "expression", ["get-week", CREATED, "iso"]),
    ("year([Created At])", "expression", ["get-year", CREATED]),
    ('regexExtract([Email], "@(.*)")', "expression", ["regex-match-first", EMAIL, "@(.*)"]),
    ("round([Total] * 100) / 100", "expression", ["/", ["round", ["*", TOTAL, 100]], 100]),
    ('datetime([Name], "unixSeconds")', "expression", ["datetime", NAME, {"mode": "unixSeconds"}]),
    ("[Total] > 50", "expression", [">", TOTAL, 50]),
    ("Sum([Total]) / Count", "aggregation", ["/", ["sum", TOTAL], ["count"]]),
    ("Count()", "aggregation", ["count"]),
    ("count", "aggregation", ["count"]),
    ("Average([Total] - [Tax])", "aggregation", ["avg", ["-", TOTAL, TAX]]),
    ("CountIf([Total] > 10) + CumulativeCount", "aggregation", ["+", ["count-where", [">", TOTAL, 10]], ["cum-count"]]),
    ("SumIf([Total], [Tax] > 1)", "aggregation", ["sum-where", TOTAL, [">", TAX, 1]]),
    ("Percentile([Total], 0.9)", "aggregation", ["percentile", TOTAL, 0.9]),
    ("Distinct([Product → Category])", "aggregation", ["distinct", CATEGORY]),
    ("[Revenue] / 2", "aggregation", ["/", ["metric", 9], 2]),
    ("Sum([Total]) - Offset(Sum([Total]), -1)", "aggregation",
     ["-", ["sum", TOTAL], ["offset", {}, ["sum", TOTAL], -1]]),
    ("Sum(case([Total] > 50, [Total], 0))", "aggregation", ["sum", ["case", [[[">", TOTAL, 50], TOTAL]], {"default": 0}]]),
    ('contains([Name], "abc") AND NOT isnull([Email])', "filter",
     ["and", ["contains", NAME, "abc"], ["not", ["is-null", EMAIL]]]),
    ('contains([Name], "abc", "case-insensitive")', "filter", ["contains", NAME, "abc", {"case-sensitive": False}]),
    ('startsWith([Name], "A") or endsWith([Name], "z")', "filter",
     ["or", ["starts-with", NAME, "A"], ["ends-with", NAME, "z"]]),
    ("NOT [Total] > 3 OR [Tax] < 1 AND [Tax] > 0", "filter",
     ["or", ["not", [">", TOTAL, 3]], ["and", ["<", TAX, 1], [">", TAX, 0]]]),
    ("NOT ([Total] > 3 OR [Tax] < 1)", "filter", ["not", ["or", [">", TOTAL, 3], ["<", TAX, 1]]]),
    ("[Total] > 1 AND [Tax] > 1 AND [Total] < 9", "filter", ["and", [">", TOTAL, 1], [">", TAX, 1], ["<", TOTAL, 9]]),
    ("[Total] + 1 >= [Tax] * 2", "filter", [">=", ["+", TOTAL, 1], ["*", TAX, 2]]),
    ("[Total] != 3", "filter", ["!=", TOTAL, 3]),
    ("between([Total], 10, 20)", "filter", ["between", TOTAL, 10, 20]),
    ('in([Product → Category], "Widget", "Gadget")', "filter", ["in", CATEGORY, "Widget", "Gadget"]),
    ('notIn([Total], 1, 2)', "filter", ["not-in", TOTAL, 1, 2]),
    ('interval([Created At], -30, "day")', "filter", ["time-interval", CREATED, -30, "day"]),
    ('interval([Created At], "current", "month", "include-current")', "filter",
     ["time-interval", CREATED, "current", "month", {"include-current": True}]),
    ("isEmpty([Email]) or notEmpty([Name])", "filter", ["or", ["is-empty", EMAIL], ["not-empty", NAME]]),
    ("[Big orders] AND [Total] > 5", "filter", ["and", ["segment", 7], [">", TOTAL, 5]]),
    ("True", "filter", True),
    ("[Created At] > datetimeSubtract(now, 1, \"year\")", "filter",
     [">", CREATED, ["datetime-subtract", ["now"], 1, "year"]]),
]


@pytest.mark.parametrize(("text", "kind", "mbql"), CASES, ids=[c[0] for c in CASES])
def test_text_becomes_the_exact_mbql_and_prints_back(text, kind, mbql):
    assert parse(text, kind, COLUMNS) == mbql
    printed = format(mbql, COLUMNS)
    assert parse(printed, kind, COLUMNS) == mbql, printed


@pytest.mark.parametrize(("text", "kind"), [
    ("[Total] - [Tax]", "expression"), ("[Total] - ([Tax] - 1)", "expression"), ("-[Total] * 2", "expression"),
    ('case([Total] > 50, "big", "small")', "expression"), ("Sum([Total]) / Count", "aggregation"),
    ('contains([Name], "abc") AND NOT isNull([Email])', "filter"), ("NOT ([Total] > 3 OR [Tax] < 1)", "filter"),
    ('[Odd \\[name\\]] = "a\\"b\\\\c\\n"', "filter"), ("[Product → Category]", "expression"),
    ('datetimeAdd([Created At], 1, "month")', "expression"), ("[Total] * ([Tax] + 1) / 2", "expression"),
    ('interval([Created At], -30, "day")', "filter"), ("CountIf([Total] > 10) + CumulativeCount", "aggregation"),
])
def test_canonical_text_prints_as_written(text, kind):
    assert format(parse(text, kind, COLUMNS), COLUMNS) == text


def test_legacy_refs_from_the_api_print_whatever_their_options_spelling():
    assert format(["-", ["field", 6, {}], ["field", 5, None]], COLUMNS) == "[Total] - [Tax]"
    assert format(["field", 30, {"source-field": 3, "base-type": "type/Text"}], COLUMNS) == "[Product → Category]"
    assert format(["=", TOTAL, 1, 2], COLUMNS) == "in([Total], 1, 2)"
    with pytest.raises(Unprintable):
        format(["field", 999, None], COLUMNS)
    with pytest.raises(Unprintable):
        format(["no-such-clause", 1], COLUMNS)


ERRORS = [
    # (text, kind, marked text, words of the message)
    ("[Total] - ", "expression", "-", "missing after"),
    ("Sum([Total])", "expression", "Sum([Total])", "aggregation"),
    ("[Total] + Count", "filter", "Count", "aggregation"),
    ("[Total]", "aggregation", "[Total]", "inside an aggregation"),
    ("Sum([Total]) + [Tax]", "aggregation", "[Tax]", "inside an aggregation"),
    ("Sum(Sum([Total]))", "aggregation", "Sum([Total])", "do not nest"),
    ("[Total] * 2", "aggregation", "[Total]", "inside an aggregation"),
    ("1 + 2", "aggregation", "1 + 2", "needs an aggregation"),
    ("foo(1)", "expression", "foo", "Unknown function foo"),
    ("sun([Total])", "aggregation", "sun", "Did you mean Sum"),
    ("[Totl] + 1", "expression", "[Totl]", "Did you mean [Total]"),
    ("Totl + 1", "expression", "Totl", "Unknown column or function"),
    ("(1 + 2", "expression", "(", "closing parenthesis"),
    ("concat([First], [Last]", "expression", "concat(", "closing parenthesis"),
    ("1 + 2)", "expression", ")", "closes no ("),
    ("[Total", "expression", "[Total", "closing bracket"),
    ("[Total]]", "expression", "]", "closes no ["),
    ('"abc', "expression", '"abc', "closing quote"),
    ('datetimeAdd([Created At], 1)', "expression", "datetimeAdd([Created At], 1)", "takes 3 arguments, got 2"),
    ("upper()", "expression", "upper()", "takes 1 argument, got 0"),
    ("substring([Name])", "expression", "substring([Name])", "at least 2 arguments"),
    ("case([Total] > 1)", "expression", "case([Total] > 1)", "condition and a value"),
    ('datetimeAdd([Created At], 1, "fortnight")', "expression", '"fortnight"', "unit in quotes"),
    ('datetimeAdd([Created At], 1, month)', "expression", "month", "needs its arguments in parentheses"),
    ('datetimeAdd([Created At], 1, fortnight)', "expression", "fortnight", "Unknown column or function"),
    ('contains([Name], "a", "loudly")', "filter", '"loudly"', "case-insensitive"),
    ("[Total] + 1", "filter", "[Total] + 1", "must be a condition"),
    ("1 < 2 < 3", "filter", "<", "do not chain"),
    ("1 +* 2", "expression", "*", "Expected a value"),
    ("1 2", "expression", "2", "operator may be missing"),
    ("concat(1,, 2)", "expression", ",", "argument is missing"),
    ("", "expression", "", "empty"),
    ("1 # 2", "expression", "#", "Unexpected character"),
    ("[ ]", "expression", "[ ]", "column name is missing"),
    ("NOT", "filter", "NOT", "needs a condition"),
    ("AND [Total] > 1", "filter", "AND", "on its left"),
    ("Sum", "aggregation", "Sum", "parentheses: Sum(value)"),
    ("[Revenue] + 1", "expression", "[Revenue]", "only be used in a summary"),
    ("Offset(Sum([Total]), 0)", "aggregation", "0", "other than 0"),
    ("Offset([Total], 1)", "aggregation", "[Total]", "inside an aggregation"),
    ("Offset(Sum([Total]), 1)", "expression", "Offset(Sum([Total]), 1)", "only be used in a summary"),
]


@pytest.mark.parametrize(("text", "kind", "marked", "words"), ERRORS, ids=[e[0] or "empty" for e in ERRORS])
def test_errors_say_what_is_wrong_and_where(text, kind, marked, words):
    with pytest.raises(ExpressionError) as caught:
        parse(text, kind, COLUMNS)
    error = caught.value
    assert words in error.message, error.message
    assert text[error.start:error.end] == marked, (error.start, error.end)


def test_a_bare_word_is_a_function_taking_no_argument_before_a_column():
    columns = {**COLUMNS, "Count": ["field", "count", {"base-type": "type/BigInteger"}]}
    assert parse("Count + 1", "aggregation", columns) == ["+", ["count"], 1]
    assert parse("[Count] + 1", "expression", columns) == ["+", ["field", "count", {"base-type": "type/BigInteger"}], 1]
    assert format(["+", ["field", "count", {"base-type": "type/BigInteger"}], 1], columns) == "[Count] + 1"


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError):
        parse("1", "window", COLUMNS)


def test_every_function_is_a_clause_the_compiler_counts_and_its_arguments_match_that_count():
    """One arity table (core.query.arity): the editor names each argument the compiler counts."""
    for function in FUNCTIONS:
        assert function.op in ARITY, function.op
        fewest, most = ARITY[function.op]
        if function.op in ("case", "if", "count", "cum-count"):
            continue
        # At most as many names as the clause takes; fewer for get-year and the like, whose clause shares
        # get-week's optional mode, which the compiler refuses for them.
        assert fewest <= len(function.args) <= most, function.name
    names = [f.name.lower() for f in FUNCTIONS]
    assert len(names) == len(set(names))


def test_signatures_mark_optional_arguments():
    by_name = {f.name: f for f in FUNCTIONS}
    assert by_name["datetimeAdd"].signature == "datetimeAdd(date, amount, unit)"
    assert by_name["substring"].signature == "substring(text, position, [length])"
    assert by_name["concat"].signature == "concat(value, [value], …)"
    assert by_name["Count"].signature == "Count"


def labels(found):
    return [s.label for s in found]


def test_completion_offers_functions_then_columns_for_the_word_at_the_cursor():
    found = complete("Su", 2, "aggregation", COLUMNS)
    assert labels(found)[:2] == ["Sum", "SumIf"]
    first = found[0]
    assert (first.insert, first.start, first.end, first.signature) == ("Sum(", 0, 2, "Sum(value)")
    assert first.description
    # No aggregation where a row expression goes.
    assert "Sum" not in labels(complete("Su", 2, "expression", COLUMNS))
    assert "subdomain" in labels(complete("Su", 2, "expression", COLUMNS))
    # A bare word also finds columns, inserted in brackets; the word after the cursor is replaced too.
    found = complete("1 + Ta + 2", 6, "expression", COLUMNS)
    tax = next(s for s in found if s.label == "Tax")
    assert (tax.kind, tax.insert, tax.start, tax.end) == ("column", "[Tax]", 4, 6)
    found = complete("Tota", 2, "expression", COLUMNS)
    assert next(s for s in found if s.label == "Total").end == 4


def test_completion_inside_brackets_offers_columns_only():
    found = complete("[Total] - [ta", 13, "expression", COLUMNS)
    assert labels(found) == ["Tax", "Total"]
    assert all(s.kind == "column" and s.start == 10 and s.end == 13 for s in found)
    # A word of a name matches: "cat" finds "Product → Category".
    assert labels(complete("[cat", 4, "expression", COLUMNS)) == ["Product → Category"]
    # Inside an existing reference, choosing replaces through its closing bracket.
    found = complete("[To] + 1", 3, "expression", COLUMNS)
    assert (found[0].label, found[0].start, found[0].end) == ("Total", 0, 4)


def test_no_completion_in_strings_after_operators_or_closed_references():
    assert complete('"Su', 3, "aggregation", COLUMNS) == []
    assert complete("[Total] ", 8, "expression", COLUMNS) == []
    assert complete("[Total]", 7, "expression", COLUMNS) == []
    assert complete("", 0, "expression", COLUMNS) == []
    # Completing a function name that already has its parenthesis inserts no second one.
    assert complete("up([Name])", 2, "expression", COLUMNS)[0].insert == "upper"


def typed_columns() -> Columns:
    columns = Columns()
    for name, ref in COLUMNS.items():
        columns.add(name, ref, {"Total": "type/Float", "Tax": "type/Float", "Created At": "type/DateTime",
                                "Name": "type/Text", "Email": "type/Text", "Product → Category": "type/Text"}.get(name))
    return columns


@pytest.mark.parametrize(("text", "kind", "marked", "words"), [
    ("[Total] + [Name]", "expression", "[Name]", "+ expects a number or a date, but this is text"),
    ('[Total] * "2"', "expression", '"2"', "* expects a number"),
    ("Sum([Product → Category])", "aggregation", "[Product → Category]", "Sum expects a number"),
    ("[Total] AND [Tax] > 1", "filter", "[Total]", "AND expects a condition"),
    ("NOT [Name]", "filter", "[Name]", "NOT expects a condition"),
    ("CountIf([Total])", "aggregation", "[Total]", "CountIf expects a condition"),
    ('case([Name], 1, 2)', "expression", "[Name]", "case expects a condition"),
    ("-[Name]", "expression", "[Name]", "- expects a number"),
])
def test_the_columns_types_catch_a_value_of_the_wrong_kind(text, kind, marked, words):
    with pytest.raises(ExpressionError) as caught:
        parse(text, kind, typed_columns())
    assert words in caught.value.message, caught.value.message
    assert text[caught.value.start:caught.value.end] == marked


def test_values_of_unknown_kind_and_dates_pass_the_type_check():
    columns = typed_columns()
    assert parse('[Created At] > "2024-01-01"', "filter", columns) == [">", CREATED, "2024-01-01"]
    assert parse('[Created At] + timeSpan(1, "day")', "expression", columns) == ["+", CREATED, ["interval", 1, "day"]]
    assert parse("[Net] * 2", "expression", columns) == ["*", ["expression", "Net"], 2]  # its type is not known
    assert parse("Max([Name])", "aggregation", columns) == ["max", NAME]
    assert parse("[Big orders] AND [Total] > 1", "filter", columns) == ["and", ["segment", 7], [">", TOTAL, 1]]


PIECES = ["[Total]", "[Tax]", "[Name]", "[Product → Category]", "Sum(", "Count", "case(", "concat(", "NOT ", " AND ",
          " OR ", "(", ")", ",", " + ", " - ", "*", "/", " = ", " > ", "<=", "1", "2.5", '"a"', "'b", "[", "]", "\\",
          "True", "-", " ", "datetimeAdd(", '"day"', "between(", "isNull(", "foo(", "Total", "→", "\n", "e5"]


@pytest.mark.parametrize("kind", ["expression", "aggregation", "filter"])
def test_any_text_is_an_expression_or_an_error_that_points_into_it(kind):
    import random

    rng = random.Random(31 + len(kind))
    columns = typed_columns()
    parsed = 0
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))
        try:
            clause = parse(text, kind, columns)
        except ExpressionError as error:
            assert 0 <= error.start <= error.end <= len(text), (text, error.start, error.end)
            assert error.message
        else:
            parsed += 1
            assert parse(format(clause, columns), kind, columns) == clause, text
        for cursor in (0, len(text) // 2, len(text)):
            complete(text, cursor, kind, columns)
    assert parsed > 5  # the texts are not all errors: the round trip was exercised
