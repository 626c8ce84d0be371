"""Parsing JSON text that comes from a client: request bodies, form fields holding JSON, jsonstr values.

One loader for all of them, so every way in has the same limits: nesting at most MAX_DEPTH levels
(code that walks a value recursively stays far from Python's recursion limit), no lone surrogates
(text that cannot be encoded as UTF-8 would fail later, in a driver or in the response), no NaN or
Infinity. orjson parses (its own depth limit is 1024, checked in C, so parsing never recurses in
Python); the depth is then measured without recursion. orjson reads integers beyond 64 bits as
floats, so text holding such a literal is parsed again by the json module, exactly (safe then:
its depth and its text are known to be fine).
"""
from __future__ import annotations

import json
import re
from typing import Any

import orjson

MAX_DEPTH = 64
_LONG_INTEGER = re.compile(rb"\d{20,}")  # 2**64 has 20 digits; a match inside a string only costs a re-parse


class JsonTextError(ValueError):
    """The text is not acceptable JSON; the message says why, for the client."""


def loads(text: str | bytes) -> Any:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
        if "depth limit" in reason:
            raise JsonTextError(f"JSON is nested more than {MAX_DEPTH} levels deep.") from None
        if "surrogate" in reason or "UTF-8" in reason or "utf-8" in reason:
            raise JsonTextError("JSON text must be valid Unicode (no lone surrogates).") from None
        raise JsonTextError("value must be valid JSON.") from None
    if depth_exceeds(value, MAX_DEPTH):
        raise JsonTextError(f"JSON is nested more than {MAX_DEPTH} levels deep.")
    raw = text.encode() if isinstance(text, str) else text
    if _LONG_INTEGER.search(raw):
        return json.loads(raw)
    return value


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether lists and maps in value nest deeper than limit (a scalar is depth 0). Level by level,
    without recursion; exact type checks, because this walks every container of a 10 MiB body."""
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below = []
        for node in level:
            for child in (node.values() if type(node) is dict else node):
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level = below
    return False
