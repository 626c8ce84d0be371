"""core.http.routing.SharedBuilderRule: apps with the same rules share one compiled URL builder per rule,
and every app still builds its own URLs (its converters, its defaults, unknown values as a query string)."""
from flask import Flask
from werkzeug.routing import BaseConverter

from core.http.routing import SharedBuilderRule


class Upper(BaseConverter):
    def to_url(self, value):
        return str(value).upper()


class Reversed(BaseConverter):
    def to_url(self, value):
        return str(value)[::-1]


def make_app(converter=None) -> Flask:
    app = Flask(f"routing-{id(converter)}")
    app.url_rule_class = SharedBuilderRule
    if converter:
        app.url_map.converters["name"] = converter
        app.add_url_rule("/named/<name:who>", "named", lambda who: who)
    app.add_url_rule("/card/<int:card_id>/query/<path:rest>", "card_query", lambda card_id, rest: "")
    def page(number):
        return str(number)

    app.add_url_rule("/page/", "page", page, defaults={"number": 1})
    app.add_url_rule("/page/<int:number>", "page", page)
    app.add_url_rule("/first/<int:number>", "first", page, defaults={"number": 1})
    return app


def build(app, endpoint, **values) -> str:
    with app.test_request_context():
        return app.url_map.bind("localhost").build(endpoint, values)


def test_equal_rules_of_two_apps_share_their_builders_and_build_their_own_urls():
    first, second = make_app(), make_app()
    rule_of = {app: next(r for r in app.url_map.iter_rules() if r.endpoint == "card_query") for app in (first, second)}
    assert rule_of[first] is not rule_of[second]
    assert rule_of[first]._build.__func__ is rule_of[second]._build.__func__
    assert rule_of[first]._build_unknown.__func__ is rule_of[second]._build_unknown.__func__
    assert build(first, "card_query", card_id=7, rest="a/b") == "/card/7/query/a/b"
    assert build(second, "card_query", card_id=8, rest="c", format="csv") == "/card/8/query/c?format=csv"


def test_a_default_for_the_rule_s_own_variable_is_built_as_werkzeug_builds_it():
    app = make_app()
    assert build(app, "page") == "/page/"
    assert build(app, "page", number=3) == "/page/3"
    assert build(app, "first") == "/first/1"
    assert build(app, "first", number=1, sort="asc") == "/first/1?sort=asc"


def test_a_shared_builder_converts_with_the_converter_of_the_app_it_is_bound_in():
    upper, backwards = make_app(Upper), make_app(Reversed)
    rules = [next(r for r in app.url_map.iter_rules() if r.endpoint == "named") for app in (upper, backwards)]
    assert rules[0]._build.__func__ is rules[1]._build.__func__
    assert build(upper, "named", who="abc") == "/named/ABC"
    assert build(backwards, "named", who="abc") == "/named/cba"


def test_equal_rules_share_their_parse_and_each_app_matches_with_converters_of_its_own():
    first, second, other = make_app(Upper), make_app(Upper), make_app(Reversed)
    for app in (first, second, other):
        app.add_url_rule("/kind/<any(card, dashboard):kind>/<int:id>", "kind", lambda kind, id: "")
    rules = [next(r for r in app.url_map.iter_rules() if r.endpoint == "kind") for app in (first, second)]
    assert rules[0]._parts[1] is rules[1]._parts[1]
    assert rules[0]._converters["kind"] is not rules[1]._converters["kind"]
    assert rules[1]._converters["kind"].map is second.url_map
    assert rules[1].arguments == {"kind", "id"}
    for app in (first, other):  # an app whose converters differ parses for itself
        adapter = app.url_map.bind("localhost")
        assert adapter.match("/kind/dashboard/4") == ("kind", {"kind": "dashboard", "id": 4})
        assert adapter.match("/card/7/query/a/b") == ("card_query", {"card_id": 7, "rest": "a/b"})
    named = [next(r for r in app.url_map.iter_rules() if r.endpoint == "named") for app in (first, other)]
    assert type(named[0]._converters["who"]) is Upper and type(named[1]._converters["who"]) is Reversed
    assert build(first, "named", who="abc") == "/named/ABC" and build(other, "named", who="abc") == "/named/cba"
