"""The admin area (Metabase's /admin/...): importing this module adds its pages to the app's blueprint.
Each section is a module of its own; admin_common holds the navigation and what they share."""
from . import (  # noqa: F401 - their routes join the blueprint
    admin_misc,
    admin_people,
    admin_people_groups,
    admin_permissions,
    admin_settings,
)
