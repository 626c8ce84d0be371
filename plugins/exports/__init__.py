"""The download formats offered to every export endpoint: csv, json and xlsx (core.export writers;
csv and xlsx also write pivot tables pivoted, json downloads them flat, as Metabase's does), and the
card's chart as png, svg or pdf (core.charts; a pivot table is drawn as its flat table)."""
from core import Exporter, hookimpl
from core.charts import writer
from core.export import csv, json, xlsx


@hookimpl
def register_exporters():
    return [
        Exporter("csv", "text/csv", "csv", csv.write, csv.write_pivot),
        Exporter("json", "application/json; charset=utf-8", "json", json.write),
        Exporter("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx", xlsx.write,
                 xlsx.write_pivot),
        Exporter("png", "image/png", "png", writer("png")),
        Exporter("svg", "image/svg+xml", "svg", writer("svg")),
        Exporter("pdf", "application/pdf", "pdf", writer("pdf")),
    ]
