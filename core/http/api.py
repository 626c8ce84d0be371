"""Declared endpoints: request parsing with pydantic, Metabase-shaped errors, JSON responses.

A plugin builds an `Api` (a Flask blueprint) and declares each endpoint with the pydantic models of
its path, query and body. The wrapper authenticates, validates, calls the view with the parsed
models and dumps what it returns. The same declarations feed the OpenAPI document and the route
walk in the tests, so an endpoint cannot exist without being described.
"""
from __future__ import annotations

import functools
import json
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal

import orjson
from flask import Blueprint, Response, request
from pydantic import BaseModel, ConfigDict, PlainSerializer, RootModel, ValidationError, WrapValidator

from core.http import jsontext
from core.http import types as mbt

from .errors import Invalid, NotFound, PayloadTooLarge

Auth = Literal["public", "user", "superuser"]


class Params(BaseModel):
    """Base of every path, query and body model: unknown keys are ignored, as Metabase does."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, arbitrary_types_allowed=True)


class Shape(BaseModel):
    """Base of a nested map declared by the keys it is known to hold (ids bounded, each known key typed),
    so that validation, the OpenAPI document and the fuzzer reach inside it. Any other key is allowed:
    MBQL and Metabase's objects have many shapes, and clients round-trip keys nobody declares."""

    model_config = ConfigDict(extra="allow")


def keep_input(value: Any, handler) -> Any:
    """A wrap validator that checks the value and hands it on unchanged (see as_sent)."""
    handler(value)
    return value


def as_sent(shape: type[BaseModel]) -> Any:
    """The type of a body field that `shape` declares and checks, whose value the view gets as the client
    sent it (a plain map, unknown keys and their order kept): the declaration refuses, it never rewrites."""
    return Annotated[shape, WrapValidator(keep_input), PlainSerializer(_as_is)]


def _as_is(value: Any) -> Any:
    return value


@dataclass
class Endpoint:
    rule: str
    method: str
    view: Callable
    path: type[BaseModel] | None
    query: type[BaseModel] | None
    body: type[BaseModel] | None
    auth: Auth
    status: int
    summary: str
    blueprint: "Api | None" = None
    form_posts: bool = False

    @property
    def full_rule(self) -> str:
        return "/api" + (self.blueprint.url_prefix or "") + self.rule


class Api(Blueprint):
    """A feature area's routes, mounted by the core under /api + url_prefix."""

    def __init__(self, name: str, import_name: str, url_prefix: str, auth: Auth = "user"):
        super().__init__(name, import_name, url_prefix=url_prefix)
        self.default_auth = auth
        self.endpoints: list[Endpoint] = []

    def endpoint_for(self, rule: str, method: str, *, path=None, query=None, body=None, auth: Auth | None = None,
                     status: int = 200, summary: str | None = None, form_posts: bool = False):
        """`form_posts=True` declares a read that browsers post as a form (downloads): the cross-site
        gate lets cookie-only form posts through to it."""
        rule = rule.rstrip("/")

        def decorator(view):
            spec = Endpoint(rule, method, view, path, query, body, auth or self.default_auth, status,
                            summary or (view.__doc__ or "").strip().split("\n")[0], self, form_posts)
            self.endpoints.append(spec)
            wrapped = _wrap(spec)
            self.add_url_rule(rule or "", endpoint=f"{view.__name__}_{method.lower()}", view_func=wrapped,
                              methods=[method], strict_slashes=False)
            return view

        return decorator

    def get(self, rule, **kw):
        return self.endpoint_for(rule, "GET", **kw)

    def post(self, rule, **kw):
        return self.endpoint_for(rule, "POST", **kw)

    def put(self, rule, **kw):
        return self.endpoint_for(rule, "PUT", **kw)

    def delete(self, rule, **kw):
        return self.endpoint_for(rule, "DELETE", **kw)


# --------------------------------------------------------------------------------------------------
# The wrapper every endpoint runs in
# --------------------------------------------------------------------------------------------------


def _wrap(spec: Endpoint):
    @functools.wraps(spec.view)
    def wrapped(**path_args):
        from core.http import auth

        check_body_size(auth.tessera().config["TESSERA_MAX_BODY_BYTES"])
        check_url_text()
        if not spec.form_posts:
            auth.check_not_cross_site(request)
        if spec.auth == "user":
            auth.require_user()
        elif spec.auth == "superuser":
            auth.require_superuser()
        kwargs = {}
        if spec.path is not None:
            kwargs["path"] = parse_path(spec.path, path_args)
        if spec.query is not None:
            kwargs["query"] = parse(spec.query, query_args(spec.query))
        if spec.body is not None:
            kwargs["body"] = parse(spec.body, body_args(spec.body))
        result = spec.view(**kwargs)
        return respond(result, spec.status)

    return wrapped


def check_body_size(limit: int) -> None:
    """413 before a byte of the body is read when its declared length is over the limit. A chunked
    body declares no length: its input is wrapped so that reading past the limit is a 413 (werkzeug's
    own MAX_CONTENT_LENGTH would silently truncate it there, and a truncated body is another body)."""
    if request.content_length is not None:
        if request.content_length > limit:
            raise PayloadTooLarge(limit)
    elif request.environ.get("wsgi.input_terminated"):
        request.environ["wsgi.input"] = BoundedInput(request.environ["wsgi.input"], limit)


class BoundedInput:
    """A WSGI input stream that raises PayloadTooLarge once more than `limit` bytes were read."""

    def __init__(self, stream, limit: int):
        self.stream = stream
        self.limit = limit
        self.count = 0

    def _counted(self, data: bytes) -> bytes:
        self.count += len(data)
        if self.count > self.limit:
            raise PayloadTooLarge(self.limit)
        return data

    def read(self, size: int = -1) -> bytes:
        # Never ask for more than one byte past the limit: that byte is enough to know.
        room = self.limit + 1 - self.count
        return self._counted(self.stream.read(room if size is None or size < 0 else min(size, room)))

    def readline(self, size: int = -1) -> bytes:
        room = self.limit + 1 - self.count
        return self._counted(self.stream.readline(room if size is None or size < 0 else min(size, room)))


def check_url_text() -> None:
    """400 when the path or the query string is not valid UTF-8 once percent-decoded (a lone surrogate
    such as %ED%A0%80): werkzeug would quietly turn it into U+FFFD and hand the view other text."""
    from urllib.parse import unquote_to_bytes

    environ = request.environ
    path, query = environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", "")
    if path.isascii() and query.isascii() and "%" not in query:
        return  # the usual URL: ASCII is UTF-8 (werkzeug has already decoded the path's escapes)
    try:
        path.encode("latin-1").decode("utf-8")
        unquote_to_bytes(query).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        raise Invalid("The URL must be valid UTF-8 text.") from None


def parse_path(model: type[BaseModel], data: dict) -> BaseModel:
    """Path parameters: as parse, except that an integer beyond BIGINT, which no row's id can be, is
    not found (404, as Metabase answers for an id no row has) rather than invalid. A type with a
    tighter bound of its own keeps its 400."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        if all(_beyond_bigint(error) for error in exc.errors()):
            raise NotFound() from None
        raise validation_error(model, exc, data) from None


def _beyond_bigint(error: dict) -> bool:
    """Whether pydantic refused a path value that is a run of digits past BIGINT (too large for the
    bound, or for pydantic's own integer parsing when it runs to thousands of digits)."""
    value = error.get("input")
    if error["type"] not in ("less_than_equal", "int_parsing", "int_parsing_size") or not isinstance(value, str):
        return False
    digits = value.lstrip("0")
    return value.isascii() and value.isdigit() and (len(digits) > 19 or int(digits or "0") > mbt.BIGINT_MAX)


def parse(model: type[BaseModel], data: Any) -> BaseModel:
    if issubclass(model, RootModel):
        # A body that is not an object (PUT /api/table/:id/fields/order takes a bare list).
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise validation_error(model, exc, data) from None
    if not isinstance(data, dict):
        raise Invalid({"body": "Value must be a map."}, {"body": [f"should be a map, received: {mbt.edn(data)}"]})
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(model, exc, data) from None


def _is_list(annotation: Any) -> bool:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, __import__("types").UnionType):
        return any(_is_list(a) for a in typing.get_args(annotation) if a is not type(None))
    return origin in (list, tuple, set) or annotation in (list, tuple, set)


@functools.cache
def _query_keys(model: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """(key, list-typed) of each field of a query model, read once per model rather than per request."""
    return tuple((info.alias or name, _is_list(info.annotation)) for name, info in model.model_fields.items())


def query_args(model: type[BaseModel]) -> dict:
    """The query string as a dict: a list for list-typed fields (repeated parameters), else the last value."""
    data: dict[str, Any] = {}
    args = request.args
    if not args:
        return data
    for key, is_list in _query_keys(model):
        if key in args:
            values = args.getlist(key)
            data[key] = values if is_list else values[-1]
    return data


def _wants_structure(info: Any) -> bool:
    meta, _ = mbt.field_type(info)
    annotation = info.annotation
    if meta is not None and meta.errors.startswith(("Value must be a map", "nullable Value must be a map")):
        return True
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    for candidate in (annotation, *typing.get_args(annotation)):
        origin = typing.get_origin(candidate) or candidate
        if origin in (dict, list) or (isinstance(origin, type) and issubclass(origin, BaseModel)):
            return True
    return False


def body_args(model: type[BaseModel]) -> Any:
    """The body as a dict: JSON, or a form whose structured fields hold JSON text (as clients send them)."""
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        data: dict[str, Any] = request.form.to_dict()
        for name, info in model.model_fields.items():
            key = info.alias or name
            if isinstance(data.get(key), str) and _wants_structure(info):
                try:
                    data[key] = jsontext.loads(data[key])
                except jsontext.JsonTextError:
                    pass  # left as text: validation then says what the field wants
        return data
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    try:
        return jsontext.loads(raw)
    except jsontext.JsonTextError as exc:
        raise Invalid({"body": str(exc)}) from None


def validation_error(model: type[BaseModel], exc: ValidationError, data: dict) -> Invalid:
    """pydantic's errors in Metabase's shape: one description per key, nested keys nested, no indexes."""
    errors: dict = {}
    specific: dict = {}
    for error in exc.errors():
        info, keys = _field_at(model, error["loc"])
        if not keys:
            keys = ["body"]
        missing = error["type"] == "missing"
        description = mbt.describe(info, error["type"]) if info is not None else error["msg"]
        _put(errors, keys, description)
        messages = mbt.specific(info, error.get("input"), missing, error["type"]) if info is not None else [
            f"{error['msg']}, received: {mbt.edn(None if missing else error.get('input'))}"
        ]
        node = _put(specific, keys, [], overwrite=False)
        if node is None:
            continue
        for message in messages:
            if message not in node:
                node.append(message)
    return Invalid(errors, specific)


def _field_at(model: type[BaseModel], loc: tuple):
    """Follow loc through nested models, lists and maps; return the FieldInfo of the deepest field found
    (for a list element or a map value, a FieldInfo of its type) and its path without indexes."""
    from pydantic.fields import FieldInfo

    found: Any = None
    keys: list[str] = []
    current: Any = model
    if issubclass(model, RootModel):  # the errors of a bare body are located from its root's type
        found = model.model_fields["root"]
        current = _model_in(found.annotation)
    for part in loc:
        if isinstance(part, int):
            element = _element_type(found.annotation) if found is not None else None
            if element is not None:
                found = FieldInfo.from_annotation(element)
                current = _model_in(element)
            continue
        value = _value_type(found.annotation) if found is not None else None
        if value is not None and _model_in(value) is not None:
            # A key of a map of shapes (template tags by name): named, then followed into its value.
            found = FieldInfo.from_annotation(value)
            keys.append(str(part))
            current = _model_in(value)
            continue
        fields = getattr(current, "model_fields", None)
        if fields is None:
            break
        info = fields.get(part) or next((f for f in fields.values() if f.alias == part), None)
        if info is None:
            if keys:  # an unknown key inside a nested object: named under its parent, which has fields too
                found = None
                keys.append(str(part))
            break
        found = info
        keys.append(info.alias or part)
        current = _model_in(info.annotation)
    return found, keys


def _value_type(annotation: Any):
    """The value type of a map type (dict[str, X], also optional or annotated), else None."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is dict:
            args = typing.get_args(candidate)
            return args[1] if len(args) == 2 else None
    return None


def _element_type(annotation: Any):
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) in (list, tuple, set):
            args = typing.get_args(candidate)
            return args[0] if args else None
    return None


def _model_in(annotation: Any):
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
        for inner in typing.get_args(candidate):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return None


def _put(tree: dict, keys: list[str], value: Any, overwrite: bool = True):
    """Set the value at the path; None where a deeper key is already described there. The deeper
    description wins in either order (a list of items where one is not an object and another has a bad
    field), since it says more."""
    for key in keys[:-1]:
        node = tree.get(key)
        if not isinstance(node, dict):
            node = tree[key] = {}
        tree = node
    if isinstance(tree.get(keys[-1]), dict):
        return None
    if overwrite or keys[-1] not in tree:
        tree[keys[-1]] = value
    return tree[keys[-1]]


# --------------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------------


def _default(value: Any):
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "__json__"):
        return value.__json__()
    import decimal

    if isinstance(value, decimal.Decimal):
        return float(value) if value % 1 else int(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot serialise {type(value).__name__}")


JSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z | orjson.OPT_SERIALIZE_NUMPY


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_default, option=JSON_OPTIONS)
    except TypeError:
        # orjson refuses integers beyond 64 bits, which a client may legitimately have stored.
        return json.dumps(value, default=_slow_default, ensure_ascii=False).encode()


def _slow_default(value: Any):
    import datetime as dt

    if isinstance(value, dt.datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return _default(value)


def json_response(value: Any, status: int = 200, headers: dict | None = None) -> Response:
    if status == 204:
        return Response(status=204, headers=headers)
    return Response(dumps(value), status=status, mimetype="application/json", headers=headers)


def respond(result: Any, status: int) -> Response:
    if isinstance(result, Response):
        return result
    return json_response(result, status)
