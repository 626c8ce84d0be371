"""The csv, json and xlsx download formats (core.export writers) offered to every export endpoint."""
from core import Exporter, hookimpl
from core.export import csv, json, xlsx


@hookimpl
def register_exporters():
    return [
        Exporter("csv", "text/csv", "csv", csv.write),
        Exporter("json", "application/json; charset=utf-8", "json", json.write),
        Exporter("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx", xlsx.write),
    ]
