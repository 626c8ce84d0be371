"""A public dashboard's dashcard with series (Metabase's combined cards): the chart picture the public and
embed pages draw (the dashcard's svg export) holds every series card, each under the page's filters and in
its own card's number format, the much larger one on a second y axis."""
import re

from .support import enable_sharing, field_ref, make_card, make_dashboard, mapping, mbql_query, share


def texts(svg: bytes) -> list[str]:
    return [t.replace("&amp;", "&") for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode())]


def test_a_public_dashcards_chart_draws_its_series_cards(client, app, admin, warehouse):
    enable_sharing(admin)
    name, age = ["field", warehouse["people.first_name"], None], ["field", warehouse["people.age"], None]

    def bars(title, aggregation, **viz):
        return make_card(admin, title, mbql_query(warehouse["db"], **{
            "source-table": warehouse["people"], "aggregation": [aggregation], "breakout": [name]}),
            display="bar", visualization_settings={"graph.show_values": True,
                                                   "graph.label_value_frequency": "all", **viz})

    ages = bars("Ages", ["sum", age])
    # The same ages in thousandths, written in euros by its own card's settings.
    mills = bars("Ages in mills", ["sum", ["*", age, 1000]], column_settings={'["name","sum"]': {
        "number_style": "currency", "currency": "EUR", "currency_style": "symbol", "decimals": 0}})
    params = [{"id": "age", "slug": "age", "type": "number/>="}]
    made = make_dashboard(app, admin.user["id"], params, [{
        "card_id": ages, "series": [mills],
        "parameter_mappings": [mapping("age", ages, field_ref(warehouse["people.age"])),
                               mapping("age", mills, field_ref(warehouse["people.age"]))]}])
    uuid = share(admin, "dashboard", made["id"])
    base = f"/api/public/dashboard/{uuid}/dashcard/{made['dashcards'][0]}/card/{ages}"
    got = client.get(f"{base}/svg", query_string={"width": "640", "height": "360"})
    assert got.status_code == 200 and got.data.startswith(b"<svg")
    shown = set(texts(got.data))
    assert {"Ages", "Ages in mills", "36", "41", "85", "€36,000", "€41,000", "€85,000"} <= shown
    assert "36,000" not in shown and "€36" not in shown  # each card its own format
    # Two y axes, each titled by its column: the left one's ticks in tens, the right one's in tens of thousands
    # of euros.
    assert {"Sum of Age", "Sum of Expression", "80", "60", "€80k", "€60k"} <= shown
    # The page's filter reaches both cards.
    filtered = set(texts(client.get(f"{base}/svg", query_string={
        "parameters": '[{"id": "age", "value": 40}]', "width": "640"}).data))
    assert {"41", "85", "€41,000", "€85,000"} <= filtered and not {"36", "€36,000"} & filtered
    # The JSON run and the data downloads stay the card's own.
    assert client.get(f"{base}/api").json["data"]["rows"] == [["Ada", 36], ["Alan", 41], ["Grace", 85]]


def test_a_dashcards_own_picture_download_draws_the_series_its_user_may_read(client, app, admin, user, warehouse):
    """The signed-in export route (what a dashboard page's PNG download posts to) combines the series the
    same way; a series card in a collection the user may not read is left out, with nothing of it."""
    name, age = ["field", warehouse["people.first_name"], None], ["field", warehouse["people.age"], None]
    hidden = admin.post("/api/collection", json={"name": "Hidden series"}).json["id"]
    graph = admin.get("/api/collection/graph").json
    assert admin.put("/api/collection/graph", json={"revision": graph["revision"], "groups": {
        "1": {str(hidden): "none"}}}).status_code == 200

    def bars(title, aggregation, **extra):
        return make_card(admin, title, mbql_query(warehouse["db"], **{
            "source-table": warehouse["people"], "aggregation": [aggregation], "breakout": [name]}),
            display="bar", **extra)

    ages, doubled = bars("Ages", ["sum", age]), bars("Doubled ages", ["sum", ["*", age, 2]])
    secret = bars("Secret ages", ["sum", ["*", age, 3]], collection_id=hidden)
    made = make_dashboard(app, admin.user["id"], [], [{"card_id": ages, "series": [doubled, secret]}])
    path = f"/api/dashboard/{made['id']}/dashcard/{made['dashcards'][0]}/card/{ages}/query/svg"
    got = admin.post(path, data={"parameters": "[]"})
    assert got.status_code == 200 and {"Ages", "Doubled ages", "Secret ages"} <= set(texts(got.data))
    seen = user.post(path, data={"parameters": "[]"})
    assert seen.status_code == 200
    words = set(texts(seen.data))
    assert {"Ages", "Doubled ages"} <= words and "Secret ages" not in words
