"""The csv, json and xlsx download formats (core.export writers) offered to every export endpoint.
csv and xlsx also write pivot tables pivoted; json downloads them flat, as Metabase's does."""
from core import Exporter, hookimpl
from core.export import csv, json, xlsx


@hookimpl
def register_exporters():
    return [
        Exporter("csv", "text/csv", "csv", csv.write, csv.write_pivot),
        Exporter("json", "application/json; charset=utf-8", "json", json.write),
        Exporter("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx", xlsx.write,
                 xlsx.write_pivot),
    ]
