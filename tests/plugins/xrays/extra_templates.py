"""A third-party plugin for the x-ray tests: one table template of its own, added through the
register_xray_templates hook (loaded with TESSERA_PLUGINS_EXTRA)."""
from core import XrayTemplate, hookimpl

SPEC = {
    "title": "Tickets at a glance: {{this}}",
    "applies_to": "GenericTable",
    "dimensions": [{"Opened": {"field_type": "CreationTimestamp"}}, {"Priority": {"field_type": "Category"}}],
    "metrics": [{"Count": {"metric": ["count"]}}],
    "dashboard_filters": ["Priority"],
    "cards": [{"Tickets": {"title": "Open tickets", "visualization": "scalar", "metrics": ["Count"]}},
              {"PerPriority": {"title": "Tickets per {{Priority}}", "visualization": "bar", "metrics": ["Count"],
                               "dimensions": ["Priority"]}},
              {"PerDay": {"title": "Tickets per day", "visualization": "line", "metrics": ["Count"],
                          "dimensions": [{"Opened": {"unit": "day"}}]}}],
}


@hookimpl
def register_xray_templates():
    return [XrayTemplate("table", "TicketsAtAGlance", SPEC)]
