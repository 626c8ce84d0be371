"""/api/ldap (administrators): saving the LDAP settings after testing the connection, as Metabase's."""
from typing import Any

from pydantic import RootModel

from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import ldap

ldap_api = Api("ldap", __name__, url_prefix="/ldap", auth="superuser")


class LdapSettings(RootModel[dict[str, Any]]):
    pass


@ldap_api.put("/settings", body=LdapSettings, status=204)
def update_ldap_settings(body: LdapSettings):
    """Change the ldap-* settings together; refused, with nothing saved, when they do not connect."""
    ldap.save_settings(db.session(), auth.tessera().settings, body.root)
