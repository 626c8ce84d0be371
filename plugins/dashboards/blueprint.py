"""The one /api/dashboard blueprint; each views module of this plugin declares its endpoints on it."""
from core.http.api import Api

dashboard_api = Api("dashboard", __name__, url_prefix="/dashboard")
