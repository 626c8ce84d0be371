"""Automatic dashboards (x-rays): /api/automagic-dashboards. Owns the templates (YAML files under
templates/, plus those other plugins add through the register_xray_templates hook), binding them to
a table's, saved question's or field's metadata, and the transient dashboards, comparisons and
candidates built from them. Saving one is POST /api/dashboard/save (the dashboards plugin).
Reads app-DB metadata only: building a dashboard runs no warehouse query.
"""
from core import hookimpl

from . import templates
from .views import xray_api


@hookimpl
def register_routes():
    return [xray_api]


@hookimpl
def register_xray_templates():
    return templates.builtin()


@hookimpl
def startup(app):
    # A duplicate or malformed template stops startup here, naming the plugin(s).
    app.extensions["xrays"] = templates.load(app.extensions["tessera"].pm)
