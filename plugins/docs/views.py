"""/api/docs and /api/docs/openapi.json."""
from flask import Response

from core.http import auth
from core.http.api import Api

from .openapi import document

docs_api = Api("docs", __name__, url_prefix="/docs", auth="public")

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Tessera API</title>
<style>body{font-family:sans-serif;margin:2em}code{background:#f4f4f4;padding:0 .3em}
td{padding:.2em .8em;vertical-align:top}</style></head>
<body><h1>Tessera API</h1><p>Machine-readable: <a href="/api/docs/openapi.json">openapi.json</a></p>
<table id="ops"></table>
<script>
fetch("/api/docs/openapi.json").then(r => r.json()).then(doc => {
  const table = document.getElementById("ops");
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const row = table.insertRow();
      row.insertCell().textContent = method.toUpperCase();
      row.insertCell().innerHTML = "<code></code>";
      row.cells[1].firstChild.textContent = path;
      row.insertCell().textContent = op.summary || "";
    }
  }
});
</script></body></html>
"""


@docs_api.get("/openapi.json")
def openapi():
    """The OpenAPI 3.1 document of this server's endpoints."""
    return document(auth.tessera().endpoints)


@docs_api.get("/")
def page():
    """A page listing every endpoint."""
    return Response(PAGE, mimetype="text/html")
