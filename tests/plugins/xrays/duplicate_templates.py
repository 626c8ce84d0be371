"""A third-party plugin for the x-ray tests that claims a built-in template's name (GenericTable)."""
from core import XrayTemplate, hookimpl


@hookimpl
def register_xray_templates():
    return [XrayTemplate("table", "GenericTable", {"cards": []})]
