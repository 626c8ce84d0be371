"""Issue 27 item 5: each embedding toggle gates exactly what Metabase's gates (plugins.sharing.toggles).
`enable-embedding-static` alone opens signed embedding: every /api/embed and /api/preview-embed route (read
from the app's declarations), the embeddable lists and a card's or dashboard's embedding flags. The
deprecated `enable-embedding` and the interactive, SDK and simple toggles open none of it; the deprecated
toggle's environment variable sets the static, interactive and SDK toggles at startup."""
from __future__ import annotations

import pytest

from plugins.sharing.toggles import SYNCED, TOGGLES, EmbeddingSettingsConflict

from .routes import EMBED_PREFIXES, request_for, shared_routes

STATIC = "enable-embedding-static"
OFF = "Embedding is not enabled."


def set_toggles(admin, on: set[str]) -> None:
    for key in TOGGLES:
        assert admin.put(f"/api/setting/{key}", json={"value": key in on}).status_code == 204


def gated_answers(app, admin, shared: dict) -> dict[str, object]:
    """What each surface the static toggle gates answers: every embed and preview route, the embeddable
    lists, and a change to a card's and a dashboard's embedding flags."""
    answers = {}
    for endpoint in shared_routes(app, EMBED_PREFIXES):
        headers = admin.headers if endpoint.full_rule.startswith("/api/preview-embed/") else {}
        answers[f"{endpoint.method} {endpoint.full_rule}"] = app.test_client().open(
            **request_for(endpoint, shared), headers=headers, buffered=True)
    answers["GET /api/card/embeddable"] = admin.get("/api/card/embeddable")
    answers["GET /api/dashboard/embeddable"] = admin.get("/api/dashboard/embeddable")
    answers["PUT /api/card/:id embedding_params"] = admin.put(
        f"/api/card/{shared['card']}", json={"embedding_params": {"first_name": "locked"}})
    answers["PUT /api/dashboard/:id embedding_params"] = admin.put(
        f"/api/dashboard/{shared['dashboard']}", json={"embedding_params": {"first_name": "locked"}})
    return answers


@pytest.mark.parametrize("toggle", sorted(set(TOGGLES) - {STATIC}))
def test_no_other_toggle_opens_signed_embedding(app, admin, shared_objects, toggle):
    set_toggles(admin, {toggle})
    opened = {name: (r.status_code, r.get_data(as_text=True)[:120])
              for name, r in gated_answers(app, admin, shared_objects).items()
              if r.status_code != 400 or r.json != OFF}
    assert not opened, opened


def test_the_static_toggle_alone_opens_all_of_it(app, admin, shared_objects):
    set_toggles(admin, {STATIC})
    refused = {name: (r.status_code, r.get_data(as_text=True)[:200])
               for name, r in gated_answers(app, admin, shared_objects).items() if r.status_code >= 400}
    assert not refused, refused


def test_the_deprecated_toggle_does_not_run_an_embedded_card(admin, client, shared_objects):
    """The issue's case: enable-embedding on, enable-embedding-static off."""
    set_toggles(admin, {"enable-embedding"})
    response = client.get(f"/api/embed/card/{shared_objects['token']['card']}/query")
    assert response.status_code == 400 and response.json == OFF
    assert "rows" not in response.get_data(as_text=True)


@pytest.mark.parametrize("toggle", sorted(TOGGLES))
def test_turning_any_toggle_on_makes_a_secret_key(app, admin, toggle):
    from core.testing import set_setting

    set_setting(app, "embedding-secret-key", None)
    assert admin.put(f"/api/setting/{toggle}", json={"value": True}).status_code == 204
    key = admin.get("/api/setting/embedding-secret-key").json
    assert isinstance(key, str) and len(key) == 64


def test_the_deprecated_environment_variable_sets_the_three_toggles(app_config, monkeypatch):
    from core.assembly.app import create_app

    monkeypatch.setenv("TESSERA_ENABLE_EMBEDDING", "true")
    started = create_app(app_config)
    try:
        state = started.extensions["tessera"]
        with started.app_context(), state.db.session() as session:
            assert {key: state.settings.get(session, key) for key in TOGGLES} == {
                **{key: False for key in TOGGLES}, **{key: True for key in SYNCED}, "enable-embedding": True}
            assert len(state.settings.get(session, "embedding-secret-key")) == 64
    finally:
        started.extensions["tessera"].db.dispose()
    monkeypatch.setenv("TESSERA_ENABLE_EMBEDDING_STATIC", "false")
    with pytest.raises(EmbeddingSettingsConflict, match="TESSERA_ENABLE_EMBEDDING_STATIC"):
        create_app(app_config)
