"""/api/preview-embed: administrators only, enable_embedding ignored, the token's _embedding_params used,
results capped at 2,000 rows, downloads in csv, json, xlsx, pdf and png."""
import csv
import io

from .jwt_helpers import card_token, dashboard_token

TOKEN_RULES = {"name": "locked", "min_age": "enabled"}


def preview_card(card_id, params=None, rules=None):
    return card_token(card_id, params, _embedding_params=TOKEN_RULES if rules is None else rules)


def test_only_administrators_preview(client, user, admin, embeddable):
    token = preview_card(embeddable["card"], {"name": "Ada"})
    for url in (f"/api/preview-embed/card/{token}", f"/api/preview-embed/card/{token}/query"):
        assert client.get(url).status_code == 401
        assert user.get(url).status_code == 403
        assert admin.get(url).status_code in (200, 202)
    export = f"/api/preview-embed/card/{token}/query/export/csv"
    assert client.post(export, json={}).status_code == 401
    assert user.post(export, json={}).status_code == 403


def test_preview_ignores_enable_embedding_and_uses_the_tokens_rules(admin, client, embeddable):
    # The other card is not embeddable; the preview shows it anyway.
    other = admin.get(f"/api/preview-embed/card/{preview_card(embeddable['other_card'], rules={})}/query")
    assert other.status_code == 202 and other.json["data"]["rows"] == [["OTHER"]]
    # The token's rules, not the stored ones: name is locked, min_age enabled.
    token = preview_card(embeddable["card"], {"name": "Grace"})
    body = admin.get(f"/api/preview-embed/card/{token}").json
    assert [p["slug"] for p in body["parameters"]] == ["min_age"]
    ran = admin.get(f"/api/preview-embed/card/{token}/query?min_age=50")
    assert ran.status_code == 202 and ran.json["data"]["rows"] == [["Grace", 85]]
    locked = admin.get(f"/api/preview-embed/card/{token}/query?name=Ada")
    assert locked.status_code == 400 and locked.json == "You can only specify a value for name in the JWT."
    missing = admin.get(f"/api/preview-embed/card/{card_token(embeddable['card'], {'name': 'Ada'})}")
    assert missing.status_code == 400 and missing.json == "Token is missing value for keypath [:_embedding_params]"


def test_preview_still_needs_embedding_on(admin, embeddable):
    assert admin.put("/api/setting/enable-embedding-static", json={"value": False}).status_code == 204
    response = admin.get(f"/api/preview-embed/card/{preview_card(embeddable['card'], {'name': 'Ada'})}")
    assert response.status_code == 400 and response.json == "Embedding is not enabled."


def test_preview_results_are_capped(admin, client, embeddable):
    token = preview_card(embeddable["big_card"], rules={})
    capped = admin.get(f"/api/preview-embed/card/{token}/query")
    assert capped.status_code == 202 and len(capped.json["data"]["rows"]) == 2000
    # An embed's download has no cap; the preview's has.
    whole = client.get(f"/api/embed/card/{card_token(embeddable['big_card'])}/query/csv")
    assert whole.status_code == 200 and len(whole.get_data(as_text=True).strip().splitlines()) == 2501
    download = admin.post(f"/api/preview-embed/card/{token}/query/export/csv", json={})
    assert download.status_code == 200 and len(download.get_data(as_text=True).strip().splitlines()) == 2001


def test_preview_dashboard_and_its_cards(admin, embeddable):
    token = dashboard_token(embeddable["dashboard"], {"name": "Grace"}, _embedding_params=TOKEN_RULES)
    body = admin.get(f"/api/preview-embed/dashboard/{token}").json
    assert [p["slug"] for p in body["parameters"]] == ["min_age"]
    url = f"/api/preview-embed/dashboard/{token}/dashcard/{embeddable['dashcard']}/card/{embeddable['card']}"
    ran = admin.get(url + "?min_age=10")
    assert ran.status_code == 202 and ran.json["data"]["rows"] == [["Grace", 85]]
    other = f"/api/preview-embed/dashboard/{token}/dashcard/{embeddable['other_dashcard']}/card/{embeddable['other_card']}"
    assert admin.get(other).status_code == 404


def test_preview_exports_every_format(admin, embeddable):
    token = preview_card(embeddable["card"], {"name": "Grace"})
    signatures = {"png": b"\x89PNG", "pdf": b"%PDF", "xlsx": b"PK"}
    for fmt in ("csv", "json", "xlsx", "pdf", "png"):
        response = admin.post(f"/api/preview-embed/card/{token}/query/export/{fmt}", json={"parameters": {"min_age": 1}})
        assert response.status_code == 200, (fmt, response.get_data()[:200])
        assert response.get_data().startswith(signatures.get(fmt, b"")), fmt
    text = admin.post(f"/api/preview-embed/card/{token}/query/export/csv", data={"parameters": '{"min_age": 1}'})
    assert list(csv.reader(io.StringIO(text.get_data(as_text=True)))) == [["first_name", "age"], ["Grace", "85"]]
    refused = admin.post(f"/api/preview-embed/card/{token}/query/export/csv", json={"parameters": {"name": "Ada"}})
    assert refused.status_code == 400
    assert admin.post(f"/api/preview-embed/card/{token}/query/export/svg", json={}).status_code == 400


def test_preview_dashcard_export_checks_the_tokens_dashboard(admin, embeddable):
    token = dashboard_token(embeddable["dashboard"], {"name": "Grace"}, _embedding_params=TOKEN_RULES)
    base = f"/api/preview-embed/dashboard/{{}}/dashcard/{embeddable['dashcard']}/card/{embeddable['card']}/export/png"
    drawn = admin.post(base.format(embeddable["dashboard"]), json={"token": token})
    assert drawn.status_code == 200 and drawn.get_data().startswith(b"\x89PNG")
    mismatch = admin.post(base.format(embeddable["other_dashboard"]), json={"token": token})
    assert mismatch.status_code == 400
    assert admin.post(base.format(embeddable["dashboard"]), json={}).status_code == 400
