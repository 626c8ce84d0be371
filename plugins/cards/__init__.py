"""/api/card: saved questions, models and metrics; running and exporting them; model persistence and
CSV uploads."""
from core import hookimpl

from .views import card_api


@hookimpl
def register_routes():
    return [card_api]
