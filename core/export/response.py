"""The HTTP side of a download, shared by every export endpoint (dataset, card, dashboard, public,
embed): Metabase's headers and file name, and a streamed body that closes the query when done."""
from __future__ import annotations

import datetime as dt

from flask import Response, stream_with_context

from core.assembly.records import Exporter
from core.http import types as t
from core.http.api import Params, dumps

from .dashcard_settings import merged

NO_CACHE = {
    "Cache-Control": "max-age=0, no-cache, must-revalidate, proxy-revalidate",
    "Expires": "Tue, 03 Jul 2001 06:00:00 GMT",
    "X-Accel-Buffering": "no",
}


def filename(prefix: str, extension: str, now: dt.datetime | None = None) -> str:
    """`query_result_<ISO timestamp>.<ext>`, as Metabase names downloads."""
    moment = (now or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    return f"{prefix}_{moment.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z.{extension}"


def download(result, exporter: Exporter, options: dict, prefix: str = "query_result") -> Response:
    """Stream `result` (a core.query.result.Result) through `exporter` as an attachment."""

    from ..query.remaps import Projected, export_order

    order = export_order(result.cols)
    cols = result.cols if order is None else [result.cols[i] for i in order]
    rows = result if order is None else Projected(result, order)

    def body():
        try:
            yield from exporter.write(cols, rows, options)
        finally:
            result.close()

    return _attachment(body(), exporter, prefix)


def _attachment(chunks, exporter: Exporter, prefix: str) -> Response:
    headers = {**NO_CACHE, "Content-Disposition": f'attachment; filename="{filename(prefix, exporter.extension)}"'}
    return Response(stream_with_context(chunks), status=200, mimetype=None, content_type=exporter.content_type,
                    headers=headers)


def pivots(exporter: Exporter | None, options: dict) -> bool:
    """Whether a pivot table's download is written pivoted: pivot_results asked, and the format can."""
    return bool(options.get("pivot_results")) and exporter is not None and exporter.write_pivot is not None


def download_pivot(session, user, exporter: Exporter, dataset_query, column_split, options: dict, *,
                   context: str, prefix: str = "query_result", **run_options) -> Response:
    """Run `dataset_query` as a pivot (core.query.pivot) and send it laid out by
    core.export.pivot, or the failed-query body (400) when it cannot be pivoted. `run_options` go to
    the processor (card_id, parameters, export_format, download_cap, ...)."""
    from core.http.api import json_response

    from ..query import processor
    from ..query.errors import QueryFailed
    from ..query.pivot import collect
    from ..query.results import FAILED_STATUS
    from .pivot import PivotTable

    try:
        pivoted = collect(session, user, dataset_query, column_split=column_split, context=context, **run_options)
    except QueryFailed as exc:
        return json_response(processor.failed_now(dataset_query, exc, context), FAILED_STATUS)
    table = PivotTable(pivoted.cols, pivoted.rows, pivoted.split, options.get("visualization_settings"),
                       bool(options.get("format_rows")))
    return _attachment(exporter.write_pivot(table, options), exporter, prefix)


def api_stream(envelope_head: dict, result, js_int_to_string: bool = True) -> Response:
    """The `api` export format: the ordinary JSON result, its rows streamed (no 2,000-row cap)."""
    from ..query.results import json_rows

    head = dumps(envelope_head)
    assert head.endswith(b"}")

    def body():
        try:
            yield head[:-1] + b',"data":{"cols":' + dumps(result.cols) + b',"rows":['
            first = True
            for batch in result.batches():
                yield (b"" if first else b",") + dumps(json_rows(batch, js_int_to_string))[1:-1]
                first = False
            yield b']},"row_count":' + str(result.row_count).encode() + b"}"
        finally:
            result.close()

    return Response(stream_with_context(body()), status=200, content_type="application/json", headers=NO_CACHE)


# A download's query context by format; the `api` format keeps its caller's context (ad-hoc, question...).
DOWNLOAD_CONTEXTS = {"csv": "csv-download", "json": "json-download", "xlsx": "xlsx-download"}
# A picture runs as the card is shown (its caller's context and row limits, as Metabase's static charts),
# not as a download of every row: nobody can see a million points.
PICTURE_FORMATS = ("png", "svg", "pdf")
# Every export route's formats: the data formats, the `api` stream and the chart pictures (core.charts).
EXPORT_FORMATS = ("api", "csv", "json", "xlsx", "png", "svg", "pdf")
ExportFormat = t.Enum(*EXPORT_FORMATS)


class ChartQuery(Params):
    """The query string of an export route that draws pictures (`?width=400&theme=dark&scale=2`, like
    Metabase's preview_card_png?width=); the data formats ignore it."""

    width: t.PositiveInt | None = None
    height: t.PositiveInt | None = None
    theme: t.Enum("light", "dark") | None = None
    scale: t.Enum("1", "2", "3", "4") | None = None


def chart_options(query: ChartQuery | None) -> dict:
    """The exporter options a ChartQuery gives (core.charts.render.writer reads them)."""
    if query is None:
        return {}
    return {"width": query.width, "height": query.height, "theme": query.theme or "light",
            "scale": int(query.scale or 1)}
# Metabase's cap for a caller whose download permission is "limited".
LIMITED_DOWNLOAD_ROWS = 10000


def exporter_for(exporters: dict, export_format: str) -> Exporter | None:
    """The registered exporter of `export_format` (None for `api`, which streams JSON); 404 otherwise."""
    from core.http.errors import NotFound

    exporter = exporters.get(export_format)
    if exporter is None and export_format != "api":
        raise NotFound(f"Export format {export_format} is not available on this server.")
    return exporter


def download_cap(level: str) -> dict:
    """The processor options a download permission level gives: 403 for none, a row cap for limited."""
    from core.http.errors import Forbidden

    if level == "none":
        raise Forbidden()
    return {"download_cap": LIMITED_DOWNLOAD_ROWS} if level == "limited" else {}


def query_download(session, user, exporter: Exporter | None, export_format: str, dataset_query: dict, *,
                   api_context: str, options: dict, column_split=None, pivot: bool = False,
                   **run_options) -> Response:
    """A query's download (ad hoc, a card, a dashboard card): laid out as a pivot table when `pivot`
    and the format can, the `api` format streamed as JSON, any other format streamed through `exporter`;
    the failed-query body (400) when it cannot start. `run_options` go to the processor (card_id,
    dashboard_id, parameters, download_cap, ...)."""
    from core.http.api import json_response

    from ..query import processor
    from ..query.errors import QueryFailed
    from ..query.results import FAILED_STATUS, iso

    context = DOWNLOAD_CONTEXTS.get(export_format, api_context)
    if pivot and pivots(exporter, options):
        return download_pivot(session, user, exporter, dataset_query, column_split, options, context=context,
                              export_format=export_format, **run_options)
    try:
        result = processor.open_query(session, user, dataset_query, context=context,
                                      export_format=None if export_format in PICTURE_FORMATS else export_format,
                                      **run_options)
    except QueryFailed as exc:
        return json_response(processor.failed_now(dataset_query, exc, context), FAILED_STATUS)
    if export_format == "api":
        ctx = result.context
        head = {"status": "completed", "context": ctx.context, "database_id": ctx.database.id,
                "started_at": iso(ctx.started_at), "json_query": dataset_query}
        return api_stream(head, result, ctx.js_int_to_string)
    return download(result, exporter, options)


def card_download(session, user, exporters: dict, export_format: str, card, options: dict, *, api_context: str,
                  **run_options) -> Response:
    """A saved card's download, from the card or from a dashboard card: the caller's download permission
    on its data decides, its visualization settings (under any in `options`, a dashboard card's) and its
    display shape the file, a pivot card downloads as a pivot."""
    from core.content.cards import pivot_column_split
    from core.http.errors import Forbidden
    from core.query import access

    exporter = exporter_for(exporters, export_format)
    if card.database_id is None:
        raise Forbidden()
    cap = download_cap(access.download_level(session, user, card.database_id, card.table_id))
    viz = merged(card.visualization_settings, options.get("visualization_settings"))
    return query_download(session, user, exporter, export_format, card.dataset_query, api_context=api_context,
                          options={**options, "visualization_settings": viz, "display": card.display,
                                   "name": card.name},
                          pivot=card.display == "pivot",
                          column_split=pivot_column_split(card), card_id=card.id, **run_options, **cap)
