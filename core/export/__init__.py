"""Streaming export writers (csv, json, xlsx): each turns result columns and a row iterator into an
iterator of byte chunks, so a download of a million rows holds one chunk in memory, not the file.

Plugins register them as core.records.Exporter through `register_exporters`; endpoints find them in
app.extensions['tessera'].exporters by format.
"""
