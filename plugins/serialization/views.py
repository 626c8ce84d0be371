"""/api/ee/serialization: export as a .tar.gz and import one, for administrators (Metabase's routes)."""
from __future__ import annotations

from flask import Response, request

from core.appdb import db
from core.http import auth
from core.http import types as t
from core.http.api import Api, Params
from core.http.errors import Invalid

from . import service
from .export import Options

serialization_api = Api("serialization", __name__, url_prefix="/ee/serialization", auth="superuser")


class ExportQuery(Params):
    collection: list[t.PositiveInt] = []
    all_collections: bool = True
    settings: bool = True
    data_model: bool = True
    field_values: bool = False
    database_secrets: bool = False
    dirname: t.NonBlankStr | None = None


class ImportQuery(Params):
    dry_run: bool = False


@serialization_api.post("/export", query=ExportQuery)
def export(query: ExportQuery):
    """Serialize the content; answers a .tar.gz of the YAML files under one directory."""
    options = Options(tuple(query.collection), query.all_collections or bool(query.collection), query.settings,
                      query.data_model, query.field_values, query.database_secrets)
    dirname, body = service.export_archive(db.session(), options, auth.tessera().settings, query.dirname)
    return Response(body, mimetype="application/gzip",
                    headers={"Content-Disposition": f'attachment; filename="{dirname}.tar.gz"'})


@serialization_api.post("/import", query=ImportQuery)
def import_archive(query: ImportQuery):
    """Create or update the content of an uploaded export (multipart `file`), in one transaction; the
    report lists what was created and changed and any errors (then nothing was changed)."""
    upload = request.files.get("file")
    if upload is None:
        raise Invalid({"file": "value must be a .tar.gz archive made by the export."})
    try:
        files = service.archive_files(upload.read())
    except service.BadArchive as exc:
        raise Invalid({"file": str(exc)}) from exc
    state = auth.tessera()
    report = service.import_files(db.session(), files, acting_user=auth.require_user().id, registry=state.settings,
                                  dry_run=query.dry_run)
    if not report.ok:
        raise Invalid({"file": "; ".join(report.problems[:5])}, report=report.as_json())
    return report.as_json()
