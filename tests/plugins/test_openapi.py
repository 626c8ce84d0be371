"""The OpenAPI document lists every registered route, generated from the declarations."""
from plugins.docs.openapi import openapi_path


def flask_routes(app):
    routes = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api"):
            continue
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            routes.add((method.lower(), openapi_path(rule.rule)))
    return routes


def test_every_registered_route_is_documented(app, client):
    document = client.get("/api/docs/openapi.json").json
    assert document["openapi"].startswith("3.1")
    documented = {(method, path) for path, operations in document["paths"].items() for method in operations}
    missing = flask_routes(app) - documented
    assert not missing, f"routes missing from the OpenAPI document: {sorted(missing)}"


def test_the_document_is_valid_openapi(client):
    from openapi_spec_validator import OpenAPIV31SpecValidator

    document = client.get("/api/docs/openapi.json").json
    errors = [str(error).split("\n")[0] for error in OpenAPIV31SpecValidator(document).iter_errors()]
    assert not errors, errors[:10]


def test_path_parameters_are_named_as_the_templates_name_them(client):
    # The x-ray fields carry hyphenated aliases for Metabase's error texts; the templates use the rule's names.
    paths = client.get("/api/docs/openapi.json").json["paths"]
    template = "/api/automagic-dashboards/{entity}/{entity_id_or_query}/cell/{cell_query}/compare/{comparison_entity}" \
               "/{comparison_entity_id_or_query}"
    names = {p["name"] for p in paths[template]["get"]["parameters"] if p["in"] == "path"}
    assert names == {"entity", "entity_id_or_query", "cell_query", "comparison_entity", "comparison_entity_id_or_query"}


def test_operations_describe_parameters_bodies_and_security(client):
    paths = client.get("/api/docs/openapi.json").json["paths"]
    login = paths["/api/session"]["post"]
    schema = login["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"username", "password"}
    assert "security" not in login
    current = paths["/api/user/current"]["get"]
    assert current["security"] and "401" in current["responses"]
    setting = paths["/api/setting/{key}"]["put"]
    assert setting["parameters"][0]["name"] == "key" and setting["parameters"][0]["in"] == "path"
    assert "403" in setting["responses"]


def test_docs_page(client):
    page = client.get("/api/docs")
    assert page.status_code == 200
    assert "openapi.json" in page.get_data(as_text=True)
