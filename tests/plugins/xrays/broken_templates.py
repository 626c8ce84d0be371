"""A third-party plugin for the x-ray tests whose template's card names a metric it does not define."""
from core import XrayTemplate, hookimpl


@hookimpl
def register_xray_templates():
    return [XrayTemplate("field", "Broken", {"cards": [{"C": {"metrics": ["Missing"]}}]})]
