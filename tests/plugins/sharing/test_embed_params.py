"""The embedding-parameter rules (plugins.sharing.embed_params), with Metabase's messages."""
import pytest
from werkzeug.datastructures import MultiDict

from core.http.errors import Invalid
from plugins.sharing import embed_params as ep

RULES = {"state": "enabled", "tenant": "locked", "secret": "disabled"}


def rejected(rules, token, url) -> str:
    with pytest.raises(Invalid) as info:
        ep.validate_and_merge(rules, token, url)
    assert info.value.status == 400
    return info.value.body


def test_enabled_from_token_or_url_but_not_both():
    assert ep.validate_and_merge(RULES, {"tenant": 1}, {"state": "CA"}) == {"tenant": 1, "state": "CA"}
    assert ep.validate_and_merge(RULES, {"tenant": 1, "state": "CA"}, {}) == {"tenant": 1, "state": "CA"}
    assert rejected(RULES, {"tenant": 1, "state": "CA"}, {"state": "NY"}) == \
        "You can't specify a value for state if it's already set in the JWT."


@pytest.mark.security_row(12)
def test_locked_must_come_from_the_token_only():
    assert rejected(RULES, {}, {}) == "You must specify a value for tenant in the JWT."
    assert rejected(RULES, {"tenant": None}, {}) == "You must specify a value for tenant in the JWT."
    assert rejected(RULES, {"tenant": "  "}, {}) == "You must specify a value for tenant in the JWT."
    assert rejected(RULES, {"tenant": 1}, {"tenant": 2}) == "You can only specify a value for tenant in the JWT."
    # ?tenant= (an empty value, read as null) still counts as the URL trying to set it
    assert rejected(RULES, {"tenant": 1}, ep.normalize({"tenant": ""})) == \
        "You can only specify a value for tenant in the JWT."


def test_disabled_from_neither():
    assert rejected(RULES, {"tenant": 1, "secret": "x"}, {}) == "You're not allowed to specify a value for secret."
    assert rejected(RULES, {"tenant": 1}, {"secret": "x"}) == "You're not allowed to specify a value for secret."
    # a blank string is no value at all
    assert ep.validate_and_merge(RULES, {"tenant": 1}, {"secret": ""}) == {"tenant": 1, "secret": ""}


def test_unlisted_parameters_are_unknown():
    assert rejected(RULES, {"tenant": 1}, {"other": 3}) == "Unknown parameter other."
    assert rejected(RULES, {"tenant": 1, "other": 3}, {}) == "Unknown parameter other."
    assert rejected(None, {}, {"state": "CA"}) == "Unknown parameter state."
    assert ep.validate_and_merge(None, {}, {}) == {}


def test_merge_token_wins_and_empty_lists_are_none():
    rules = {"a": "enabled", "b": "enabled"}
    assert ep.validate_and_merge(rules, {"a": []}, {"b": ["x"]}) == {"a": None, "b": ["x"]}


def test_rules_must_be_a_slug_status_map():
    with pytest.raises(Invalid):
        ep.validate_and_merge({"a": "visible"}, {}, {})
    with pytest.raises(Invalid):
        ep.validate_and_merge(["a"], {}, {})


def test_url_params_from_slugs_repeated_for_lists():
    args = MultiDict([("state", "CA"), ("cat", "a"), ("cat", "b"), ("empty", ""), ("format_rows", "true")])
    assert ep.user_params(args.lists(), None) == {"state": "CA", "cat": ["a", "b"], "empty": None}


def test_url_params_from_one_parameters_json():
    args = MultiDict([("parameters", '{"n": 5, "flag": true, "s": ""}'), ("state", "CA")])
    assert ep.user_params(args.lists(), args.get("parameters")) == {"n": 5, "flag": True, "s": None}
    # unparsable or not an object: the plain keys, as Metabase falls back
    assert ep.user_params(MultiDict([("parameters", "[1]"), ("state", "CA")]).lists(), "[1]") == {"state": "CA"}
    assert ep.user_params(MultiDict([("state", "CA")]).lists(), "{bad") == {"state": "CA"}


def test_hidden_slugs():
    parameters = [{"slug": "state"}, {"slug": "tenant"}, {"slug": "secret"}, {"slug": "unlisted"}, {"slug": "other"}]
    rules = {**RULES, "other": "enabled"}
    assert ep.hidden_slugs(parameters, rules, {"other": 1}) == {"tenant", "secret", "unlisted", "other"}
    assert ep.hidden_slugs(parameters, None, {}) == {"state", "tenant", "secret", "unlisted", "other"}


def test_slug_values_become_parameter_objects():
    parameters = [{"id": "p1", "slug": "state", "type": "string/=", "target": ["dimension", ["field", 3, None]]},
                  {"id": "p2", "slug": "n", "type": "number/="}]
    assert ep.slug_values_to_parameters(parameters, {"state": "CA", "n": None}) == (
        {"id": "p1", "slug": "state", "type": "string/=", "value": "CA", "target": ["dimension", ["field", 3, None]]},)
    with pytest.raises(Invalid, match="No matching parameter with slug 'gone'"):
        ep.slug_values_to_parameters(parameters, {"gone": 1})


def test_a_card_passes_unknown_slugs_on_for_its_template_tags():
    assert ep.slug_values_to_parameters([], {"tag": 3, "none": None}, strict=False) == ({"slug": "tag", "value": 3},)
