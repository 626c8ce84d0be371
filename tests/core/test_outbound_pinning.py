"""core.outbound.http: the connection goes to the address that was checked (one lookup, no proxy from
the environment), TLS is checked against the host name, and the allow-list setting.

A stub resolver stands in for DNS where a test needs a name to answer differently from one lookup to
the next (rebinding) or to point at a loopback server; the connection itself is always real.
"""
from __future__ import annotations

import datetime
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core.outbound import addresses
from core.outbound import http as outbound
from core.outbound.http import OutboundError, OutboundRefused, Timeouts

# One xdist worker runs this module (make test: --dist loadgroup): its module-scoped servers start once.
pytestmark = pytest.mark.xdist_group("outbound-pinning")

FAST = Timeouts(connect=0.5, read=1, total=3)


class Resolver:
    """A DNS stand-in: answers[n] is the n-th lookup's answer (the last one repeats); counts lookups."""

    def __init__(self, *answers: list[str]):
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, host, port):
        self.asked.append(host)
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


@pytest.mark.security_row(10)
def test_a_rebinding_name_is_looked_up_once_and_the_checked_address_is_the_one_connected(make_http_server):
    checked, rebound = make_http_server("127.0.0.1"), make_http_server("127.0.0.2")
    resolver = Resolver(["127.0.0.1"], ["127.0.0.2"])
    url = f"http://api.example.test:{checked.port}/x"
    response = outbound.fetch("GET", url, allowed_cidrs="127.0.0.1/32", resolver=resolver)
    assert response.status == 200 and resolver.asked == ["api.example.test"]
    [received] = checked.requests
    assert received.header("Host") == f"api.example.test:{checked.port}" and received.target == "/x"
    assert rebound.requests == []


@pytest.mark.security_row(10)
@pytest.mark.parametrize("answer", [["93.184.216.34", "127.0.0.2"], ["127.0.0.1", "10.0.0.1"],
                                    ["127.0.0.1", "::ffff:169.254.169.254"]])
def test_every_address_of_a_name_must_pass(http_server, answer):
    with pytest.raises(OutboundRefused):
        outbound.fetch("GET", f"http://mixed.example.test:{http_server.port}/", allowed_cidrs="127.0.0.1/32",
                       resolver=Resolver(answer), timeouts=FAST)
    assert http_server.requests == []


def test_an_allowed_ipv6_literal_is_connected_to_directly(make_http_server):
    server = make_http_server("::1")
    response = outbound.fetch("GET", f"{server.url}/six", allowed_cidrs="::1/128", resolver=Resolver([]))
    assert response.status == 200 and server.requests[0].header("Host") == f"[::1]:{server.port}"


def test_a_checked_address_that_refuses_the_connection_gives_way_to_the_next(http_server):
    resolver = Resolver(["127.0.0.2", "127.0.0.1"])
    response = outbound.fetch("GET", f"http://two.example.test:{http_server.port}/", allowed_cidrs="127.0.0.0/8",
                              resolver=resolver, timeouts=FAST)
    assert response.status == 200 and len(http_server.requests) == 1 and resolver.asked == ["two.example.test"]


@pytest.mark.security_row(10)
def test_proxies_from_the_environment_are_not_used(make_http_server, monkeypatch):
    target, proxy = make_http_server("127.0.0.1"), make_http_server("127.0.0.2")
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, proxy.url)
    outbound.fetch("GET", f"{target.url}/direct", allowed_cidrs="127.0.0.0/8")
    assert [r.target for r in target.requests] == ["/direct"] and proxy.requests == []


@pytest.mark.security_row(10)
def test_without_the_guard_the_refused_requests_would_arrive(http_server, monkeypatch):
    """The guard-removal check compat/security.md asks for: the refusal tests fail when the address
    check is a no-op, because the loopback server then receives the request."""
    monkeypatch.setattr(addresses, "refusal", lambda ip, allowed=(): None)
    assert outbound.fetch("GET", f"{http_server.url}/leak").status == 200
    assert [r.path for r in http_server.requests] == ["/leak"]


# --------------------------------------------------------------------------------------------------
# TLS: SNI and certificate check on the host name while the socket goes to the checked address
# --------------------------------------------------------------------------------------------------


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject, issuer, public_key, signing_key, *, ca: bool, dns: str | None = None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if dns:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    else:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signing_key.public_key()),
                                        critical=False)
    return builder.sign(signing_key, hashes.SHA256())


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A test CA and, signed by it, a server certificate for api.example.test: (ca file, cert, key)."""
    directory = tmp_path_factory.mktemp("tls")
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate(_name("Tessera test CA"), _name("Tessera test CA"), ca_key.public_key(), ca_key, ca=True)
    leaf = _certificate(_name("api.example.test"), ca.subject, key.public_key(), ca_key, ca=False,
                        dns="api.example.test")
    files = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return files


@pytest.fixture
def https_server(make_http_server, tls_files):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls_files[1], tls_files[2])
    return make_http_server("127.0.0.1", tls=context)


@pytest.fixture
def trusting(tls_files):
    return ssl.create_default_context(cafile=str(tls_files[0]))


def test_https_goes_to_the_checked_address_with_sni_and_certificate_on_the_host_name(https_server, trusting):
    resolver = Resolver(["127.0.0.1"], ["127.0.0.2"])
    response = outbound.fetch("GET", f"https://api.example.test:{https_server.port}/secure",
                              allowed_cidrs="127.0.0.1/32", resolver=resolver, tls_context=trusting)
    assert response.status == 200 and resolver.asked == ["api.example.test"]
    assert https_server.server_names == ["api.example.test"]
    assert https_server.requests[0].header("Host") == f"api.example.test:{https_server.port}"


@pytest.mark.parametrize("url", ["https://other.example.test:{port}/", "https://127.0.0.1:{port}/"])
def test_a_certificate_for_another_name_is_refused(https_server, trusting, url):
    with pytest.raises(OutboundError) as caught:
        outbound.fetch("GET", url.format(port=https_server.port), allowed_cidrs="127.0.0.1/32",
                       resolver=Resolver(["127.0.0.1"]), tls_context=trusting, timeouts=FAST)
    assert "TLS" in caught.value.message and https_server.requests == []


def test_certificates_are_verified_by_default(https_server):
    with pytest.raises(OutboundError) as caught:
        outbound.fetch("GET", f"https://api.example.test:{https_server.port}/", allowed_cidrs="127.0.0.1/32",
                       resolver=Resolver(["127.0.0.1"]), timeouts=FAST)
    assert "certificate" in caught.value.message.lower() and https_server.requests == []


# --------------------------------------------------------------------------------------------------
# The allow-list setting
# --------------------------------------------------------------------------------------------------


def test_the_allow_list_setting_is_stored_normalised_and_checked(admin):
    path = "/api/setting/http-actions-allowed-cidrs"
    assert admin.get(path).json == ""
    assert admin.put(path, json={"value": " 10.0.0.0/8, 127.0.0.1 ,fd00::1/8"}).status_code == 204
    assert admin.get(path).json == "10.0.0.0/8,127.0.0.1/32,fd00::/8"
    bad = admin.put(path, json={"value": "10.0.0.0/8,intranet"})
    assert bad.status_code == 400 and "intranet" in bad.json["errors"]["value"]
    assert admin.get(path).json == "10.0.0.0/8,127.0.0.1/32,fd00::/8"


def test_the_allow_list_comes_from_the_environment_too(app, http_server, monkeypatch):
    monkeypatch.setenv("TESSERA_HTTP_ACTIONS_ALLOWED_CIDRS", "127.0.0.0/8")
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        allowed = outbound.allowed_cidrs(state.settings, session)
    assert allowed == "127.0.0.0/8"
    assert outbound.fetch("GET", f"{http_server.url}/", allowed_cidrs=allowed).status == 200


def test_without_the_setting_nothing_internal_is_allowed(app, http_server):
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        allowed = outbound.allowed_cidrs(state.settings, session)
    assert allowed == ""
    with pytest.raises(OutboundRefused):
        outbound.fetch("GET", f"{http_server.url}/", allowed_cidrs=allowed)
    assert http_server.requests == []
