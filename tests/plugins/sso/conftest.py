"""The slapd fixture: skipped, naming the package, where Debian's slapd is not installed."""
import pytest

from . import slapd as slapd_server


@pytest.fixture(scope="module")
def slapd(tmp_path_factory):
    if slapd_server.SLAPD is None:
        pytest.skip("slapd not found: install Debian's slapd package (apt-get install slapd ldap-utils) to run "
                    "the LDAP tests")
    server = slapd_server.start(tmp_path_factory.mktemp("slapd"))
    yield server
    server.stop()
