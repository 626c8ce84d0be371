"""core.outbound.http.fetch against real HTTP(S) servers on loopback addresses.

Loopback is refused like every internal address, so each test that must get through allows its
server's address explicitly (`allowed_cidrs`); the refusal tests check that the server received
nothing. Row 10 of the threat table (SSRF) is proved here; the header and URL checks are the client's
part of row 11, whose URL templates belong to HTTP actions.
"""
from __future__ import annotations

import gzip
import socket
import time

import pytest

from core.outbound import http as outbound
from core.outbound.http import OutboundError, OutboundRefused, OutboundTimeout, ResponseTooLarge, Timeouts

LOOPBACK = "127.0.0.1/32"
FAST = Timeouts(connect=0.5, read=0.5, total=3)


def _refused(method, url, **kw) -> OutboundRefused:
    with pytest.raises(OutboundRefused) as caught:
        outbound.fetch(method, url, timeouts=FAST, **kw)
    assert caught.value.status == 400 and caught.value.body == caught.value.message
    return caught.value


def test_an_allowed_loopback_server_gets_the_request_and_its_answer_comes_back(http_server):
    http_server.route("/hello", status=201, headers={"Content-Type": "text/plain; charset=utf-8", "X-Two": "2"},
                      body="héllo".encode())
    response = outbound.fetch("POST", f"{http_server.url}/hello?a=1", headers={"X-Metabase-Action": "7"},
                              body='{"x": 1}', allowed_cidrs=LOOPBACK)
    assert (response.status, response.text, response.headers["x-two"]) == (201, "héllo", "2")
    assert response.url == f"{http_server.url}/hello?a=1"
    [received] = http_server.requests
    assert (received.method, received.target, received.body) == ("POST", "/hello?a=1", b'{"x": 1}')
    assert received.header("Host") == f"127.0.0.1:{http_server.port}"
    assert received.header("X-Metabase-Action") == "7"
    assert received.header("User-Agent").startswith("Tessera/")


@pytest.mark.security_row(10)
@pytest.mark.parametrize("url", [
    "http://127.0.0.1:{port}/", "http://127.0.0.2:{port}/", "http://[::1]:{port}/", "http://0.0.0.0:{port}/",
    "http://[::]:{port}/", "http://localhost:{port}/", "http://[::ffff:127.0.0.1]:{port}/",
    "http://2130706433:{port}/", "http://0x7f000001:{port}/", "http://0177.0.0.1:{port}/", "http://127.1:{port}/",
    "http://10.0.0.1/", "http://172.16.0.1/", "http://172.31.255.255/", "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[fe80::1]/", "http://[fc00::1]/",
    "http://[fec0::1]/", "http://100.64.0.1/", "http://192.0.0.8/", "http://224.0.0.1/", "http://[ff02::1]/",
    "http://240.0.0.1/", "http://255.255.255.255/", "http://[2002:7f00:1::]/", "http://[2002:a00:1::]/",
    "http://[64:ff9b::7f00:1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b:1::1]/",
    "http://[::ffff:10.0.0.1]/", "http://[::ffff:169.254.169.254]/", "http://[2001::1]/",
])
def test_internal_destinations_are_refused_and_get_nothing(http_server, url):
    error = _refused("GET", url.format(port=http_server.port))
    assert "http-actions-allowed-cidrs" in error.message
    assert http_server.requests == []


@pytest.mark.security_row(10)
def test_an_allow_list_for_other_networks_does_not_open_loopback(http_server):
    _refused("GET", f"{http_server.url}/", allowed_cidrs="10.0.0.0/8, fd00::/8")
    assert http_server.requests == []


@pytest.mark.security_row(10)
def test_a_name_is_allowed_by_the_address_it_resolves_to(http_server):
    """localhost is refused without an allow-list (above) and reaches the server once 127/8 is allowed."""
    response = outbound.fetch("GET", f"http://localhost:{http_server.port}/", allowed_cidrs="127.0.0.0/8,::1/128")
    assert response.status == 200 and http_server.requests[0].header("Host") == f"localhost:{http_server.port}"


def test_an_ipv4_mapped_address_is_allowed_by_its_ipv4_cidr():
    from ipaddress import ip_address

    from core.outbound import addresses

    allowed = addresses.parse_cidrs("127.0.0.0/8")
    assert addresses.refusal(ip_address("::ffff:127.0.0.1"), allowed) is None
    assert addresses.refusal(ip_address("::ffff:10.0.0.1"), allowed) == "private"


# Each URL and the reason it is refused for, read from its text alone.
REFUSED_URLS = {
    "ftp://example.com/x": "Only http and https URLs are allowed.",
    "file:///etc/passwd": "Only http and https URLs are allowed.",
    "gopher://example.com:70/_x": "Only http and https URLs are allowed.",
    "dict://example.com:11211/": "Only http and https URLs are allowed.",
    "ws://example.com/": "Only http and https URLs are allowed.",
    "//example.com/": "Only http and https URLs are allowed.",
    "example.com": "Only http and https URLs are allowed.",
    "": "The URL is empty.",
    "http:///path": "The URL has no valid host.",
    "http://user:pass@example.com/": "Credentials in the URL are not allowed",
    "http://example.com@127.0.0.1/": "Credentials in the URL are not allowed",
    "http://example.com\\@127.0.0.1/": "Credentials in the URL are not allowed",
    "http://exa mple.com/": "The host 'exa mple.com' is not a valid host name.",
    "http://ex%61mple.com/": "The host 'ex%61mple.com' is not a valid host name.",
    "http://[fe80::1%25eth0]/": "IPv6 zone identifiers are not allowed in URLs.",
    "http://example.com:0/": "The URL's port is not valid.",
    "http://example.com:99999/": "The URL is not valid.",
}


@pytest.mark.security_row(10)
@pytest.mark.parametrize("url", list(REFUSED_URLS))
def test_urls_other_than_plain_http_and_https_are_refused(url):
    """Refused for what the URL says, before any name is looked up (_no_dns fails the test if one is)."""
    assert REFUSED_URLS[url] in _refused("GET", url, resolver=_no_dns).message


@pytest.mark.security_row(10)
def test_a_redirect_to_a_refused_address_is_not_followed(make_http_server):
    first, second = make_http_server("127.0.0.1"), make_http_server("127.0.0.2")
    first.route("/go", status=302, headers={"Location": f"{second.url}/inside"})
    error = _refused("GET", f"{first.url}/go", allowed_cidrs=LOOPBACK)
    assert "127.0.0.2" in error.message
    assert [r.path for r in first.requests] == ["/go"] and second.requests == []


@pytest.mark.security_row(10)
def test_a_redirect_to_a_name_that_resolves_to_loopback_is_refused(make_http_server):
    """The first server is on 127.0.0.2 (allowed alone); localhost is 127.0.0.1, where a second one waits."""
    first, local = make_http_server("127.0.0.2"), make_http_server("127.0.0.1")
    first.route("/go", status=302, headers={"Location": f"http://localhost:{local.port}/inside"})
    error = _refused("GET", f"{first.url}/go", allowed_cidrs="127.0.0.2/32")
    assert "localhost" in error.message and local.requests == [] and len(first.requests) == 1


@pytest.mark.security_row(10)
def test_a_fully_qualified_loopback_name_sends_nothing(http_server):
    with pytest.raises(OutboundError) as caught:  # refused, or not resolved where "localhost." is unknown
        outbound.fetch("GET", f"http://localhost.:{http_server.port}/", timeouts=FAST)
    assert caught.value.status == 400 and http_server.requests == []


@pytest.mark.security_row(10)
@pytest.mark.parametrize("location", ["http://169.254.169.254/latest/meta-data/", "http://[::1]:{port}/again",
                                      "http://[::ffff:127.0.0.2]:{port}/again", "http://0.0.0.0:{port}/again",
                                      "http://internal.example.test:{port}/", "file:///etc/passwd",
                                      "gopher://127.0.0.1:{port}/"])
def test_redirects_to_internal_places_or_other_schemes_are_refused(http_server, location):
    """Only 127.0.0.1 is allowed; the redirect names another internal address, directly or by a name."""
    def resolver(host, port):
        return {"127.0.0.1": ["127.0.0.1"], "internal.example.test": ["10.1.2.3"]}[host]

    http_server.route("/go", status=301, headers={"Location": location.format(port=http_server.port)})
    _refused("GET", f"http://127.0.0.1:{http_server.port}/go", allowed_cidrs=LOOPBACK, resolver=resolver)
    assert [r.path for r in http_server.requests] == ["/go"]


def _chain(sink, hops: int) -> None:
    for n in range(hops):
        sink.route(f"/hop{n}", status=(301, 302, 307, 308)[n % 4], headers={"Location": f"/hop{n + 1}"})
    sink.route(f"/hop{hops}", body="arrived")


def test_three_redirects_are_followed(http_server):
    _chain(http_server, 3)
    response = outbound.fetch("GET", f"{http_server.url}/hop0", allowed_cidrs=LOOPBACK)
    assert (response.status, response.body, response.url) == (200, b"arrived", f"{http_server.url}/hop3")
    assert [r.path for r in http_server.requests] == ["/hop0", "/hop1", "/hop2", "/hop3"]


@pytest.mark.security_row(10)
def test_a_fourth_redirect_is_refused(http_server):
    _chain(http_server, 4)
    error = _refused("GET", f"{http_server.url}/hop0", allowed_cidrs=LOOPBACK)
    assert "redirects" in error.message
    assert [r.path for r in http_server.requests] == ["/hop0", "/hop1", "/hop2", "/hop3"]


def test_redirect_methods_bodies_and_credentials(make_http_server):
    first, second = make_http_server("127.0.0.1"), make_http_server("127.0.0.2")
    first.route("/see-other", status=303, headers={"Location": "/landed"})
    first.route("/temporary", status=307, headers={"Location": "/landed"})
    first.route("/elsewhere", status=302, headers={"Location": f"{second.url}/landed"})
    sent = {"Authorization": "Bearer s3cret", "Cookie": "a=b", "Content-Type": "application/json", "X-Keep": "1"}
    for path in ("/see-other", "/temporary", "/elsewhere"):
        outbound.fetch("POST", f"{first.url}{path}", headers=sent, body=b"{}", allowed_cidrs="127.0.0.0/8")
    landed = [r for r in first.requests if r.path == "/landed"]
    assert [(r.method, r.body) for r in landed] == [("GET", b""), ("POST", b"{}")]
    assert landed[0].header("Content-Type") is None and landed[1].header("Authorization") == "Bearer s3cret"
    [other] = second.requests
    assert (other.method, other.header("Authorization"), other.header("Cookie"), other.header("X-Keep")) == \
        ("GET", None, None, "1")


def test_a_redirect_without_location_is_the_answer(http_server):
    http_server.route("/odd", status=302, body="no location")
    response = outbound.fetch("GET", f"{http_server.url}/odd", allowed_cidrs=LOOPBACK)
    assert (response.status, response.body) == (302, b"no location")


def test_bodies_are_capped(http_server):
    http_server.route("/declared", body=b"x" * 1001)
    http_server.route("/exact", body=b"x" * 1000)

    def undeclared(received, out):
        out.send_response(200)
        out.send_header("Connection", "close")
        out.end_headers()
        for _ in range(20):
            out.wfile.write(b"y" * 100)

    http_server.route("/undeclared", handler=undeclared)
    assert outbound.fetch("GET", f"{http_server.url}/exact", allowed_cidrs=LOOPBACK, max_bytes=1000).body == b"x" * 1000
    for path in ("/declared", "/undeclared"):
        with pytest.raises(ResponseTooLarge) as caught:
            outbound.fetch("GET", f"{http_server.url}{path}", allowed_cidrs=LOOPBACK, max_bytes=1000)
        assert caught.value.status == 400 and "1000 bytes" in caught.value.message


def test_the_default_cap_is_ten_mebibytes_and_counts_decompressed_bytes(http_server):
    bomb = gzip.compress(b"\0" * (outbound.MAX_BODY_BYTES + 1))
    http_server.route("/bomb", headers={"Content-Encoding": "gzip"}, body=bomb)
    http_server.route("/fits", body=b"z" * outbound.MAX_BODY_BYTES)
    assert len(bomb) < 100_000
    with pytest.raises(ResponseTooLarge):
        outbound.fetch("GET", f"{http_server.url}/bomb", allowed_cidrs=LOOPBACK)
    assert len(outbound.fetch("GET", f"{http_server.url}/fits", allowed_cidrs=LOOPBACK).body) == outbound.MAX_BODY_BYTES


def test_a_slow_answer_times_out(http_server):
    http_server.route("/slow", handler=lambda received, out: time.sleep(4))
    started = time.monotonic()
    with pytest.raises(OutboundTimeout) as caught:
        outbound.fetch("GET", f"{http_server.url}/slow", allowed_cidrs=LOOPBACK, timeouts=FAST)
    assert time.monotonic() - started < 3 and caught.value.status == 400


def test_a_dripping_answer_stops_at_the_total_deadline(http_server):
    def drip(received, out):
        out.send_response(200)
        out.send_header("Connection", "close")
        out.end_headers()
        for _ in range(100):
            out.wfile.write(b".")
            out.wfile.flush()
            time.sleep(0.1)

    http_server.route("/drip", handler=drip)
    started = time.monotonic()
    with pytest.raises(OutboundTimeout):
        outbound.fetch("GET", f"{http_server.url}/drip", allowed_cidrs=LOOPBACK,
                       timeouts=Timeouts(connect=0.5, read=0.5, total=1))
    assert time.monotonic() - started < 3


def test_a_connection_that_is_never_accepted_times_out():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    waiting = []
    try:
        while True:  # fill the accept queue: further connection attempts get no answer at all
            client = socket.socket()
            client.settimeout(0.3)
            waiting.append(client)
            try:
                client.connect(("127.0.0.1", port))
            except TimeoutError:
                break
        started = time.monotonic()
        with pytest.raises(OutboundTimeout) as caught:
            outbound.fetch("GET", f"http://127.0.0.1:{port}/", allowed_cidrs=LOOPBACK, timeouts=FAST)
        assert "connect" in caught.value.message and time.monotonic() - started < 3
    finally:
        for client in waiting:
            client.close()
        listener.close()


def test_a_closed_port_is_a_connection_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(OutboundError) as caught:
        outbound.fetch("GET", f"http://127.0.0.1:{port}/", allowed_cidrs=LOOPBACK, timeouts=FAST)
    assert type(caught.value) is OutboundError and "Could not connect" in caught.value.message


@pytest.mark.parametrize("headers", [
    {"X-Value": "a\r\nX-Injected: 1"}, {"X-Value": "a\nX-Injected: 1"}, {"X-Value": "a\rb"}, {"X-Value": "a\0b"},
    {"X-Value": "a\r\n b"}, {"X-Name\r\nX-Injected": "1"}, {"X Name": "1"}, {"X-Name:": "1"}, {"": "1"},
    {"Host": "internal.example"}, {"Content-Length": "0"}, {"Transfer-Encoding": "chunked"},
    {"X-Value": None}, {"X-Value": ["a"]},
])
def test_header_injection_is_refused_and_nothing_is_sent(http_server, headers):
    _refused("GET", f"{http_server.url}/", headers=headers, allowed_cidrs=LOOPBACK)
    assert http_server.requests == []


@pytest.mark.parametrize("url", ["{base}/a\r\nX-Injected: 1", "{base}/a\nb", "{base}/a\0", "{base}/?q=a\r\nb",
                                 "{base}/a\tb"])
def test_control_characters_in_the_url_are_refused(http_server, url):
    _refused("GET", url.format(base=http_server.url), allowed_cidrs=LOOPBACK)
    assert http_server.requests == []


def test_encoded_line_breaks_and_unicode_travel_as_escapes(http_server):
    outbound.fetch("GET", f"{http_server.url}/a%0d%0aX-Injected:%201/é?q=ü v",
                   headers={"X-Name": "Zoë"}, allowed_cidrs=LOOPBACK)
    [received] = http_server.requests
    assert received.target.lower() == "/a%0d%0ax-injected:%201/%c3%a9?q=%c3%bc%20v"
    assert received.header("X-Injected") is None
    assert received.header("X-Name").encode("latin-1").decode() == "Zoë"


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "GET /x HTTP/1.1\r\n", "", None])
def test_methods_outside_the_list_are_refused(http_server, method):
    _refused(method, f"{http_server.url}/", allowed_cidrs=LOOPBACK)
    assert http_server.requests == []


def test_a_head_answer_may_declare_a_large_body(http_server):
    http_server.route("/big", headers={"Content-Length": str(outbound.MAX_BODY_BYTES + 1)})
    response = outbound.fetch("HEAD", f"{http_server.url}/big", allowed_cidrs=LOOPBACK)
    assert (response.status, response.body) == (200, b"")


def test_methods_are_sent_upper_case(http_server):
    for method in ("get", "Put", "PATCH", "DELETE", "HEAD"):
        assert outbound.fetch(method, f"{http_server.url}/", allowed_cidrs=LOOPBACK).status == 200
    assert [r.method for r in http_server.requests] == ["GET", "PUT", "PATCH", "DELETE", "HEAD"]


def _no_dns(host, port):
    raise AssertionError(f"no lookup expected, asked for {host}")


def test_an_invalid_allow_list_refuses_everything(http_server):
    error = _refused("GET", f"{http_server.url}/", allowed_cidrs="127.0.0.1/33")
    assert "127.0.0.1/33" in error.message and http_server.requests == []


def test_a_name_that_does_not_resolve_is_a_clear_400():
    def nothing(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(OutboundError) as caught:
        outbound.fetch("GET", "http://nowhere.example.test/", resolver=nothing)
    assert type(caught.value) is OutboundError and "nowhere.example.test" in caught.value.message


def _raw(answer: bytes):
    return lambda received, out: out.wfile.write(answer)


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"Content-Length: 0\r\n\r\n",
    b"HELLO THERE\r\n\r\n", b"", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n",
    b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 100_000 + b"\r\nContent-Length: 0\r\n\r\n",
])
def test_a_broken_answer_is_a_clear_400(http_server, answer, monkeypatch):
    import http.client

    # Whatever another library did to http.client's own limit (clickhouse-connect raises it to 10,000).
    monkeypatch.setattr(http.client, "_MAXHEADERS", 10_000)
    http_server.route("/broken", handler=_raw(answer))
    with pytest.raises(OutboundError) as caught:
        outbound.fetch("GET", f"{http_server.url}/broken", allowed_cidrs=LOOPBACK, timeouts=FAST)
    message = caught.value.message
    assert caught.value.status == 400 and ("127.0.0.1" in message or "response" in message)


@pytest.mark.security_row(10)
def test_check_destination_judges_a_url_as_fetch_would_and_sends_nothing(http_server):
    for url in (f"{http_server.url}/hook", "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"):
        with pytest.raises(OutboundRefused):
            outbound.check_destination(url)
    outbound.check_destination(f"{http_server.url}/hook", allowed_cidrs=LOOPBACK)
    with pytest.raises(OutboundRefused):
        outbound.check_destination(f"{http_server.url}/hook", allowed_cidrs="not a cidr")
    assert http_server.requests == []
