"""Signed embedding and its preview: a token opens one shared card or dashboard, then every embed request
is served by that object's Shareable (core.content.shared), the same callables the public links use.

`open_embed` is the one gate: verify the token (plugins.sharing.tokens), find the object it names and check
it may be embedded: static embedding on, the object present and not archived, and (not in a preview) its
`enable_embedding`. A preview (superuser only, checked by its routes) takes the parameter rules from the
token's `_embedding_params` instead of the object and caps every result at PREVIEW_MAX_ROWS.

Parameter values reach the Shareable only after embed_params.validate_and_merge, so a locked value can
come from the token alone and a URL can never set a disabled or unlisted one.

A token's `attributes` claim (a map of attribute name -> string or number: the tenant's user attributes)
is handed to every Shareable call as the grant's tenant (core.policy.principal.embedding_tenant); a
`restrict_tables` plugin (plugins.sandboxes, its `embedding-sandbox-group-id` setting) decides what it
restricts. Only the signed token can carry it: no URL parameter reaches it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from flask import Response

from core.assembly.records import Shareable, SharedQuery
from core.content import shared
from core.http.errors import Archived, Invalid, NotFound
from core.policy import sharing
from core.policy.principal import embedding_tenant

from . import embed_params, tokens

PREVIEW_MAX_ROWS = 2000  # Metabase's preview cap (#20938): a preview must stay cheap
RESOURCE_KEY = {"card": "question", "dashboard": "dashboard"}
LABEL = {"card": "Card", "dashboard": "Dashboard"}
ATTRIBUTES_CLAIM = "attributes"  # the tenant's user attributes (docs/sandboxes.md, "Embedding for many tenants")
CONTEXT = {"card": "embedded-question", "dashboard": "embedded-dashboard"}  # the query log's, as Metabase's


@dataclass(frozen=True)
class Embed:
    """A verified token and the checked object it names."""

    kind: Shareable
    obj: Any
    token_params: dict
    rules: dict
    preview: bool
    attributes: dict | None = None

    @property
    def max_rows(self) -> int | None:
        return PREVIEW_MAX_ROWS if self.preview else None


def _resource_id(session, kind: Shareable, claims: dict, model: str) -> int:
    """The object id the token's resource names: a positive integer, or a 21-character entity id."""
    value = tokens.get_in(claims, "resource", RESOURCE_KEY[model])
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    entity_id = getattr(kind.table, "entity_id", None)
    if isinstance(value, str) and len(value) == 21 and entity_id is not None:
        from sqlalchemy import select

        found = session.scalar(select(kind.table.id).where(entity_id == value))
        if found is None:
            raise NotFound()
        return found
    raise Invalid(f"{LABEL[model]} id should be a positive integer.")


def open_embed(session, token: str, model: str, *, preview: bool = False) -> Embed:
    """Verify `token` and return the `model` object ("card" | "dashboard") it names, checked (400/404)."""
    kind = shared.require(model)
    sharing.check_embedding(session)
    claims = tokens.unsign(token, sharing.embedding_secret(session), require_exp=_require_exp())
    obj_id = _resource_id(session, kind, claims, model)
    obj = session.get(kind.table, obj_id) if obj_id <= 2**63 - 1 else None
    if obj is None:
        raise NotFound()
    if obj.archived:
        raise Archived()
    if not preview and not obj.enable_embedding:
        raise Invalid("Embedding is not enabled for this object.")
    params = tokens.token_params(claims)
    if preview:
        rules = embed_params.check_embedding_params(tokens.get_in(claims, "_embedding_params"))
    else:
        rules = embed_params.check_embedding_params(obj.embedding_params)
    return Embed(kind, obj, params, rules, preview, token_attributes(claims))


def token_attributes(claims: dict) -> dict:
    """The token's tenant attributes ({} without the claim): a map of names to strings or numbers (400
    otherwise); a null value is an absent attribute."""
    found = claims.get(ATTRIBUTES_CLAIM)
    if found is None:
        return {}
    if not isinstance(found, dict) or any(
            not isinstance(k, str) or not k or not (v is None or isinstance(v, (str, int, float)))
            for k, v in found.items()):
        raise tokens.TokenError(f"Token value for keypath {tokens.keypath((ATTRIBUTES_CLAIM,))} must be a map "
                                "of attribute names to strings or numbers.")
    return {k: v for k, v in found.items() if v is not None}


def _require_exp() -> bool:
    from flask import current_app

    from core.assembly.config import parse_bool

    return parse_bool(current_app.config.get("TESSERA_EMBEDDING_REQUIRE_EXP", False))


def slot(embed: Embed, name: str):
    """The Shareable's callable `name`, called with the token's tenant on the grants it builds."""
    found = getattr(embed.kind, name)
    if found is None:
        raise NotFound()

    def call(*args, **kwargs):
        with embedding_tenant(embed.attributes):
            return found(*args, **kwargs)
    return call


# --------------------------------------------------------------------------------------------------
# The operations: each opens the token, then asks the object's Shareable
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """What an embed URL names: a token for a `model` ("card" | "dashboard"), in a preview or not."""

    token: str
    model: str
    preview: bool = False


def open_ref(session, ref: Ref) -> Embed:
    return open_embed(session, ref.token, ref.model, preview=ref.preview)


def object_json(session, ref: Ref) -> dict:
    """The object as its public JSON, without the parameters a viewer cannot set (locked, disabled,
    unlisted, or set by the token); a dashboard's cards lose their mappings to locked, disabled or
    unlisted parameters too, as Metabase strips them."""
    embed = open_ref(session, ref)
    parameters = object_parameters(session, embed)
    hide = embed_params.hidden_slugs(parameters, embed.rules, embed.token_params)
    body = embed.kind.public_json(session, embed.obj, hide)
    removed_ids = {p.get("id") for p in parameters if embed.rules.get(str(p.get("slug"))) != "enabled"}
    kept_fields, removed_fields = set(), set()
    for dashcard in body.get("dashcards") or ():
        if not isinstance(dashcard, dict) or not dashcard.get("parameter_mappings"):
            continue
        mappings = [m for m in dashcard["parameter_mappings"] if isinstance(m, dict)]
        for m in mappings:
            (removed_fields if m.get("parameter_id") in removed_ids else kept_fields).add(_field_id(m.get("target")))
        dashcard["parameter_mappings"] = [m for m in mappings if m.get("parameter_id") not in removed_ids]
    # A field only a hidden filter reads is not described to the viewer either.
    gone = {str(f) for f in removed_fields - kept_fields if f is not None}
    if isinstance(body.get("param_fields"), dict) and gone:
        body["param_fields"] = {k: v for k, v in body["param_fields"].items() if str(k) not in gone}
    return body


def _field_id(target: Any) -> int | None:
    """The field id of a mapping target ["dimension", ["field", id, opts]], else None."""
    if isinstance(target, list) and len(target) >= 2 and target[0] == "dimension":
        ref = target[1]
        if isinstance(ref, list) and len(ref) >= 2 and ref[0] == "field" and isinstance(ref[1], int):
            return ref[1]
    return None


def object_parameters(session, embed: Embed) -> list[dict]:
    """The object's parameters, a card's template tags included (its public JSON merges them)."""
    stored = getattr(embed.obj, "parameters", None) or []
    if embed.kind.model == "card":
        return list(embed.kind.public_json(session, embed.obj, frozenset()).get("parameters") or stored)
    return list(stored)


def shared_query(session, embed: Embed, url_params: Mapping[str, Any], *, dashcard_id=None, card_id=None,
                  pivot=False, options=None) -> SharedQuery:
    merged = embed_params.validate_and_merge(embed.rules, embed.token_params, url_params)
    parameters = embed_params.slug_values_to_parameters(getattr(embed.obj, "parameters", None) or [], merged,
                                                        strict=embed.kind.model == "dashboard")
    return SharedQuery(parameters=parameters, dashcard_id=dashcard_id, card_id=card_id, pivot=pivot,
                       max_rows=embed.max_rows, options=dict(options or {}), context=CONTEXT[embed.kind.model])


def run(session, ref: Ref, url_params: Mapping[str, Any], **where) -> Response:
    """The query results of the card, or of one card of the dashboard (`dashcard_id`, `card_id`);
    `pivot=True` for pivot-table results."""
    embed = open_ref(session, ref)
    query = shared_query(session, embed, url_params, **where)
    body, status = slot(embed, "run")(session, embed.obj, query)
    return Response(body, status=status, mimetype="application/json")


def export(session, ref: Ref, url_params: Mapping[str, Any], export_format: str, options: dict,
           **where) -> Response:
    """The results as a download in `export_format` (a registered exporter's, or "api")."""
    embed = open_ref(session, ref)
    query = shared_query(session, embed, url_params, options=options, **where)
    return slot(embed, "export")(session, embed.obj, query, export_format)


def field_values(session, ref: Ref, field_id: int) -> dict:
    embed = open_ref(session, ref)
    return slot(embed, "field_values")(session, embed.obj, field_id)


def field_search(session, ref: Ref, field_id: int, search_field_id: int, value: str, limit: int | None):
    embed = open_ref(session, ref)
    return slot(embed, "field_search")(session, embed.obj, field_id, search_field_id, value, limit)


def field_remapping(session, ref: Ref, field_id: int, remapped_id: int, value: str):
    embed = open_ref(session, ref)
    return slot(embed, "field_remapping")(session, embed.obj, field_id, remapped_id, value)


def param_values(session, ref: Ref, param_key: str, url_params: Mapping[str, Any], prefix: str | None = None):
    """The values of parameter `param_key` (its id) for a filter widget. Only an enabled parameter the
    token does not set has a widget, so only such a one can be listed or searched (Metabase's rule). For a
    dashboard the URL gives the other filters' current values keyed by parameter id; they narrow the list
    (chained filters) after passing the same rules as a query's values."""
    embed = open_ref(session, ref)
    id_to_slug = _widget_slug(session, embed, param_key, "Cannot search for values")
    constraints: dict = {}
    if embed.kind.model == "dashboard":
        by_slug: dict = {}
        for key, value in url_params.items():
            if key not in id_to_slug:
                raise Invalid(f"Invalid query params: could not determine slug for parameter with ID {quoted(key)}")
            by_slug[id_to_slug[key]] = value
        merged = embed_params.validate_and_merge(embed.rules, embed.token_params, by_slug)
        slug_to_id = {s: i for i, s in id_to_slug.items()}
        constraints = {slug_to_id[s]: v for s, v in merged.items() if v is not None and s in slug_to_id}
    return slot(embed, "param_values")(session, embed.obj, param_key, constraints, prefix)


def param_remapping(session, ref: Ref, param_key: str, value: str) -> list:
    """[value, display] of one value of parameter `param_key`, under the same rule as its value list."""
    embed = open_ref(session, ref)
    _widget_slug(session, embed, param_key, "Cannot get remapped value for parameter")
    return slot(embed, "param_remapping")(session, embed.obj, param_key, value)


def _widget_slug(session, embed: Embed, param_key: str, refusal: str) -> dict[str, str]:
    """Check that parameter `param_key` (an id) has a widget in the embed: enabled, and not set by the
    token (400 otherwise, Metabase's messages); return the object's parameter id -> slug map."""
    parameters = object_parameters(session, embed)
    id_to_slug = {str(p.get("id")): str(p.get("slug")) for p in parameters if p.get("id") is not None}
    slug = id_to_slug.get(param_key)
    if slug is None or embed.rules.get(slug) != "enabled":
        raise Invalid(f"{refusal}: {quoted(slug)} is not an enabled parameter.")
    if embed.token_params.get(slug) is not None:
        raise Invalid(f"You can't specify a value for {quoted(slug)} if it's already set in the JWT.")
    return id_to_slug


def quoted(text: str | None) -> str:
    """A name as Metabase's messages print it (pr-str): in double quotes, or nil."""
    return "nil" if text is None else '"' + text.replace('"', '\\"') + '"'
