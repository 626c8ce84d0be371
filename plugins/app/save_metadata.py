"""A model's metadata on its page (issue 31 item 5): each result column's display name, description and
semantic type, edited in a panel (app/_save_metadata.html) and stored as Metabase's frontend stores
them: PUT /api/card/:id with the card's `result_metadata`, every column's entry kept and the edited keys
changed. The API decides who may write the model and answers the refusal shown in the panel.
"""
from __future__ import annotations

from core.http.internal import call

from .render import go, signed_in_user
from .save import card_path, read_card, refusal, refusals
from .views import blueprint, fragment, id_of, posted

# The semantic types Metabase's metadata editor offers most (type/* names), with their labels.
SEMANTIC_TYPES = (
    ("type/PK", "Entity key"), ("type/FK", "Foreign key"), ("type/Name", "Entity name"),
    ("type/Category", "Category"), ("type/Title", "Title"), ("type/Description", "Description"),
    ("type/Comment", "Comment"), ("type/Quantity", "Quantity"), ("type/Score", "Score"),
    ("type/Percentage", "Percentage"), ("type/Currency", "Currency"), ("type/Price", "Price"),
    ("type/Discount", "Discount"), ("type/Income", "Income"), ("type/Cost", "Cost"),
    ("type/Share", "Share"), ("type/City", "City"), ("type/State", "State"), ("type/Country", "Country"),
    ("type/ZipCode", "Zip code"), ("type/Latitude", "Latitude"), ("type/Longitude", "Longitude"),
    ("type/Email", "Email"), ("type/URL", "URL"), ("type/ImageURL", "Image URL"),
    ("type/CreationTimestamp", "Creation timestamp"), ("type/CreationDate", "Creation date"),
    ("type/Birthdate", "Birthday"),
)
KNOWN = {value for value, _ in SEMANTIC_TYPES}


@blueprint.get("/model/<id_slug>/metadata")
@refusals
def metadata_panel(id_slug: str):
    signed_in_user()
    card = read_card(id_of(id_slug))
    return fragment("app/_save_metadata.html", card=card, columns=card.get("result_metadata") or [],
                    semantic_types=SEMANTIC_TYPES)


@blueprint.post("/model/<id_slug>/metadata")
@refusals
def save_metadata(id_slug: str):
    signed_in_user()
    body = posted()
    card_id = id_of(id_slug)
    card = read_card(card_id)
    columns = [dict(column) for column in card.get("result_metadata") or [] if isinstance(column, dict)]
    for index, column in enumerate(columns):
        name = str(body.get(f"display_name-{index}") or "").strip()
        if f"display_name-{index}" in body:
            if not name:
                return fragment("app/_form_error.html", status=400,
                                message=f"Column {index + 1} ({column.get('name')}) needs a display name.")
            column["display_name"] = name
        if f"description-{index}" in body:
            column["description"] = str(body.get(f"description-{index}") or "").strip() or None
        if f"semantic_type-{index}" in body:
            semantic = str(body.get(f"semantic_type-{index}") or "")
            if semantic and semantic not in KNOWN and semantic != column.get("semantic_type"):
                return fragment("app/_form_error.html", status=400, message=f"“{semantic}” is not a semantic type.")
            column["semantic_type"] = semantic or None
    answer = call("PUT", f"/api/card/{card_id}", json={"result_metadata": columns})
    if not answer.ok or not isinstance(answer.body, dict):
        return refusal(answer, "The model's metadata could not be saved.")
    return go(card_path(answer.body))

