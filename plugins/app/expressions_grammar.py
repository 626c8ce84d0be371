"""The custom expression language's vocabulary and tokens (plugins/app/expressions.py is the interface):
the functions people type, with the MBQL clause each one is, and the tokenizer.

Names are Metabase's (its expression editor's display names, matched case-insensitively); how many
arguments a function takes is core.query.arity's table for its MBQL clause, the one the compiler
checks, so a function the editor accepts has the count the API accepts. Only clauses the compiler
compiles are listed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.query.arity import ARITY, MANY


class ExpressionError(ValueError):
    """What is wrong with an expression, and where: `start`..`end` are character offsets of the text
    (end exclusive; start == end points between two characters, e.g. at the end of the text)."""

    def __init__(self, message: str, start: int, end: int):
        super().__init__(message)
        self.message, self.start, self.end = message, start, max(start, end)


@dataclass(frozen=True)
class Function:
    op: str             # the MBQL clause
    name: str           # what people type
    args: tuple[str, ...]
    description: str
    returns: str        # "number", "string", "boolean", "datetime", "any"
    aggregation: bool = False
    window: bool = False  # a summary's function over its rows (Offset): only in a summary, not nested

    @property
    def summary_only(self) -> bool:
        return self.aggregation or self.window

    @property
    def arity(self) -> tuple[int, int]:
        return ARITY[self.op]

    @property
    def signature(self) -> str:
        fewest, most = self.arity
        if self.op in ("case", "if"):
            return f"{self.name}(condition, value, …, [default])"
        if not self.args:
            return self.name
        shown = [a if i < fewest else f"[{a}]" for i, a in enumerate(self.args)]
        if most == MANY:
            shown.append("…")
        return f"{self.name}({', '.join(shown)})"


def _f(op, name, args, description, returns, aggregation=False, window=False) -> Function:
    return Function(op, name, tuple(args), description, returns, aggregation, window)


FUNCTIONS: tuple[Function, ...] = (
    # aggregations
    _f("count", "Count", [], "The number of rows (or of non-empty values of a column).", "number", True),
    _f("cum-count", "CumulativeCount", [], "The running count of rows across the breakout.", "number", True),
    _f("sum", "Sum", ["value"], "The sum of a numeric value over the rows.", "number", True),
    _f("cum-sum", "CumulativeSum", ["value"], "The running sum of a value across the breakout.", "number", True),
    _f("distinct", "Distinct", ["value"], "The number of distinct values.", "number", True),
    _f("avg", "Average", ["value"], "The average of a numeric value.", "number", True),
    _f("median", "Median", ["value"], "The median of a numeric value.", "number", True),
    _f("min", "Min", ["value"], "The smallest value.", "any", True),
    _f("max", "Max", ["value"], "The largest value.", "any", True),
    _f("stddev", "StandardDeviation", ["value"], "The standard deviation of a numeric value.", "number", True),
    _f("var", "Variance", ["value"], "The variance of a numeric value.", "number", True),
    _f("percentile", "Percentile", ["value", "fraction"], "The value below which the given fraction (0 to 1) "
       "of values fall.", "number", True),
    _f("share", "Share", ["condition"], "The fraction of rows for which the condition holds.", "number", True),
    _f("count-where", "CountIf", ["condition"], "The number of rows for which the condition holds.", "number", True),
    _f("sum-where", "SumIf", ["value", "condition"], "The sum of a value over the rows where the condition "
       "holds.", "number", True),
    _f("distinct-where", "DistinctIf", ["value", "condition"], "The number of distinct values among the rows "
       "where the condition holds.", "number", True),
    _f("offset", "Offset", ["value", "rows"], "The value of an aggregation in another row of the summary "
       "(-1 the row before, 1 the row after).", "any", window=True),
    # logic
    _f("case", "case", ["condition", "value", "…"], "The value after the first condition that holds, else "
       "the last argument (optional default).", "any"),
    _f("if", "if", ["condition", "value", "…"], "The same as case.", "any"),
    _f("coalesce", "coalesce", ["value", "value"], "The first of its values that is not empty.", "any"),
    _f("between", "between", ["value", "start", "end"], "Whether a value lies between start and end "
       "(inclusive).", "boolean"),
    _f("in", "in", ["value", "value"], "Whether the value equals one of the others.", "boolean"),
    _f("not-in", "notIn", ["value", "value"], "Whether the value equals none of the others.", "boolean"),
    _f("is-null", "isNull", ["value"], "Whether the value is empty (null).", "boolean"),
    _f("not-null", "notNull", ["value"], "Whether the value is not empty (not null).", "boolean"),
    _f("is-empty", "isEmpty", ["value"], "Whether the value is null or empty text.", "boolean"),
    _f("not-empty", "notEmpty", ["value"], "Whether the value is neither null nor empty text.", "boolean"),
    # text
    _f("concat", "concat", ["value", "value"], "The values joined into one text.", "string"),
    _f("contains", "contains", ["text", "search", "\"case-insensitive\""], "Whether the text contains the "
       "search text.", "boolean"),
    _f("does-not-contain", "doesNotContain", ["text", "search", "\"case-insensitive\""], "Whether the text "
       "does not contain the search text.", "boolean"),
    _f("starts-with", "startsWith", ["text", "prefix", "\"case-insensitive\""], "Whether the text starts "
       "with the prefix.", "boolean"),
    _f("ends-with", "endsWith", ["text", "suffix", "\"case-insensitive\""], "Whether the text ends with the "
       "suffix.", "boolean"),
    _f("substring", "substring", ["text", "position", "length"], "Part of the text, from a position counted "
       "from 1.", "string"),
    _f("split-part", "splitPart", ["text", "delimiter", "position"], "The part at a position (from 1) of the "
       "text split by the delimiter.", "string"),
    _f("regex-match-first", "regexExtract", ["text", "pattern"], "The first match of a regular expression.",
       "string"),
    _f("replace", "replace", ["text", "find", "replacement"], "The text with every occurrence of one text "
       "replaced by another.", "string"),
    _f("length", "length", ["text"], "The number of characters.", "number"),
    _f("lower", "lower", ["text"], "The text in lower case.", "string"),
    _f("upper", "upper", ["text"], "The text in upper case.", "string"),
    _f("trim", "trim", ["text"], "The text without leading and trailing spaces.", "string"),
    _f("ltrim", "lTrim", ["text"], "The text without leading spaces.", "string"),
    _f("rtrim", "rTrim", ["text"], "The text without trailing spaces.", "string"),
    _f("host", "host", ["url"], "The host of a URL or e-mail address.", "string"),
    _f("domain", "domain", ["url"], "The domain name of a URL or e-mail address, without its suffix.",
       "string"),
    _f("subdomain", "subdomain", ["url"], "The subdomain of a URL.", "string"),
    _f("path", "path", ["url"], "The path of a URL.", "string"),
    _f("month-name", "monthName", ["month"], "The name of a month number (1 is January).", "string"),
    _f("quarter-name", "quarterName", ["quarter"], "The name of a quarter number (Q1 to Q4).", "string"),
    _f("day-name", "dayName", ["day"], "The name of a day-of-week number.", "string"),
    # conversions
    _f("text", "text", ["value"], "The value as text.", "string"),
    _f("integer", "integer", ["value"], "Text or a number as a whole number.", "number"),
    _f("float", "float", ["value"], "Text or a number as a decimal number.", "number"),
    _f("date", "date", ["value"], "Text or a date-time as a date.", "datetime"),
    _f("datetime", "datetime", ["value", "mode"], "Text or a number as a date-time (mode: \"iso\", "
       "\"simple\", \"unixSeconds\", …).", "datetime"),
    # math
    _f("abs", "abs", ["number"], "The absolute value.", "number"),
    _f("floor", "floor", ["number"], "The number rounded down.", "number"),
    _f("ceil", "ceil", ["number"], "The number rounded up.", "number"),
    _f("round", "round", ["number"], "The number rounded to the nearest whole number.", "number"),
    _f("sqrt", "sqrt", ["number"], "The square root.", "number"),
    _f("power", "power", ["number", "exponent"], "The number raised to the exponent.", "number"),
    _f("log", "log", ["number"], "The base-10 logarithm.", "number"),
    _f("exp", "exp", ["number"], "e raised to the number.", "number"),
    # dates
    _f("get-year", "year", ["date"], "The year of a date.", "number"),
    _f("get-quarter", "quarter", ["date"], "The quarter (1 to 4) of a date.", "number"),
    _f("get-month", "month", ["date"], "The month (1 to 12) of a date.", "number"),
    _f("get-week", "week", ["date", "mode"], "The week of the year (mode \"iso\", \"us\" or \"instance\").",
       "number"),
    _f("get-day", "day", ["date"], "The day of the month.", "number"),
    _f("get-day-of-week", "weekday", ["date", "mode"], "The day of the week (1 to 7).", "number"),
    _f("get-hour", "hour", ["date"], "The hour of the day (0 to 23).", "number"),
    _f("get-minute", "minute", ["date"], "The minute of the hour.", "number"),
    _f("get-second", "second", ["date"], "The second of the minute.", "number"),
    _f("datetime-add", "datetimeAdd", ["date", "amount", "unit"], "The date moved forward by an amount of a "
       "unit (\"day\", \"month\", …).", "datetime"),
    _f("datetime-subtract", "datetimeSubtract", ["date", "amount", "unit"], "The date moved back by an amount "
       "of a unit.", "datetime"),
    _f("datetime-diff", "datetimeDiff", ["start", "end", "unit"], "Whole units from start to end.", "number"),
    _f("now", "now", [], "The current date and time.", "datetime"),
    _f("today", "today", [], "The current date.", "datetime"),
    _f("convert-timezone", "convertTimezone", ["date", "target zone", "source zone"], "The date-time as "
       "seen in another time zone.", "datetime"),
    _f("time-interval", "interval", ["date", "amount", "unit", "\"include-current\""], "Whether the date "
       "falls in the last (negative amount) or next units, or \"current\" one.", "boolean"),
    _f("relative-time-interval", "intervalStartingFrom", ["date", "amount", "unit", "offset", "offset unit"],
       "Whether the date falls in an interval shifted by an offset.", "boolean"),
    _f("relative-datetime", "relativeDateTime", ["amount", "unit"], "The moment an amount of units from now.",
       "datetime"),
    _f("interval", "timeSpan", ["amount", "unit"], "A span of time, to add to or subtract from a date.", "any"),
)

BY_NAME = {f.name.lower(): f for f in FUNCTIONS}
BY_OP = {f.op: f for f in FUNCTIONS if f.op != "if"}
BOOLEAN_OPS = {"and", "or", "not", "=", "!=", "<", "<=", ">", ">=", "segment",
               *(f.op for f in FUNCTIONS if f.returns == "boolean")}
# Options that MBQL keeps in a map and the text writes as a last string argument.
STRING_OPTIONS = {"contains", "does-not-contain", "starts-with", "ends-with"}
KEYWORDS = {"and", "or", "not", "true", "false"}


# -- tokens --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    kind: str    # number, string, column, name, op, "(", ")", ",", end
    text: str    # the source text
    value: object
    start: int
    end: int


_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("!=", "<=", ">=", "+", "-", "*", "/", "=", "<", ">")
UNESCAPE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}


def _quoted(text: str, start: int, close: str) -> tuple[str, int] | None:
    """The unescaped content of a quoted run starting at `start` (its opening character) and the offset
    after its closing character; None when it is never closed."""
    out, i = [], start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(UNESCAPE.get(nxt, nxt) if close != "]" else nxt)
            i += 2
            continue
        if ch == close:
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    return None


def tokenize(text: str, lenient: bool = False) -> list[Token]:
    """The tokens of `text`, ending with an "end" token. Lenient (for completion) stops at an unclosed
    quote or bracket, giving it as an "open-column"/"open-string" token, instead of raising."""
    tokens, i = [], 0
    while i < len(text):
        ch = text[i]
        if space := _SPACE.match(text, i):
            i = space.end()
            continue
        if ch in "\"'[":
            close = "]" if ch == "[" else ch
            found = _quoted(text, i, close)
            kind = "column" if ch == "[" else "string"
            if found is None:
                if lenient:
                    tokens.append(Token("open-" + kind, text[i:], text[i + 1:], i, len(text)))
                    break
                what = "a closing bracket ]" if ch == "[" else f"the closing quote {ch}"
                raise ExpressionError(f"Missing {what}.", i, len(text))
            value, end = found
            if kind == "column" and not value.strip():
                if not lenient:
                    raise ExpressionError("A column name is missing between the brackets.", i, end)
            tokens.append(Token(kind, text[i:end], value, i, end))
            i = end
            continue
        if ch == "]":
            if lenient:
                i += 1
                continue
            raise ExpressionError("This ] closes no [.", i, i + 1)
        if number := _NUMBER.match(text, i):
            raw = number.group()
            value = float(raw) if any(c in raw for c in ".eE") else int(raw)
            tokens.append(Token("number", raw, value, i, number.end()))
            i = number.end()
            continue
        if name := _NAME.match(text, i):
            tokens.append(Token("name", name.group(), name.group(), i, name.end()))
            i = name.end()
            continue
        if ch in "(),":
            tokens.append(Token(ch, ch, ch, i, i + 1))
            i += 1
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
        if op is not None:
            tokens.append(Token("op", op, op, i, i + len(op)))
            i += len(op)
            continue
        if lenient:
            i += 1
            continue
        raise ExpressionError(f"Unexpected character “{ch}”.", i, i + 1)
    tokens.append(Token("end", "", None, len(text), len(text)))
    return tokens
