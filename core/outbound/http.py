"""The guarded outbound HTTP client: every HTTP request Tessera makes for a user (HTTP actions,
subscription webhooks) goes through `fetch`.

compat/security.md section 4 and threat rows 10-11. The host is resolved once and every address must
pass core.outbound.addresses (public, or inside `http-actions-allowed-cidrs`); the connection then goes
to that checked address (urllib3 pool on the IP, `Host` header, TLS SNI and certificate check on the
host name), so a second DNS answer can never redirect it. Redirects are followed by hand, each hop
checked again. Nothing is sent to a refused destination, and nothing is retried once a byte was sent.
"""
from __future__ import annotations

import codecs
import ipaddress
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urljoin

import urllib3
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError, ReadTimeoutError, SSLError

from core.assembly import __version__
from core.assembly.hookspecs import hookimpl
from core.assembly.records import SettingDef
from core.http.errors import Invalid

from . import addresses
from .errors import OutboundError, OutboundRefused, OutboundTimeout, ResponseTooLarge
from .targets import Target, check_headers, check_method, parse_target

__all__ = ["fetch", "check_destination", "Response", "Timeouts", "allowed_cidrs", "system_resolver", "OutboundError", "OutboundRefused",
           "OutboundTimeout", "ResponseTooLarge", "SETTING", "MAX_BODY_BYTES", "MAX_REDIRECTS"]

SETTING = "http-actions-allowed-cidrs"
MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 3
# http.client refuses more than 100 header lines, but that limit is a module global another library may
# raise (clickhouse-connect sets 10,000 when imported): the count is checked here too.
MAX_HEADERS = 100
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Credentials meant for one origin are not forwarded to another after a redirect.
ORIGIN_BOUND = frozenset({"authorization", "proxy-authorization", "cookie"})
CHUNK = 64 * 1024

Resolver = Callable[[str, int], Iterable[str]]


@dataclass(frozen=True)
class Timeouts:
    """Seconds: to open a connection, to wait for each read, and for the whole exchange with redirects."""

    connect: float = 5.0
    read: float = 30.0
    total: float = 30.0


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes
    url: str  # after redirects

    @property
    def text(self) -> str:
        message = Message()
        message["content-type"] = self.headers.get("content-type", "")
        charset = message.get_content_charset() or "utf-8"
        try:
            codecs.lookup(charset)
        except LookupError:
            charset = "utf-8"
        return self.body.decode(charset, errors="replace")


def system_resolver(host: str, port: int) -> list[str]:
    """Every IPv4/IPv6 address getaddrinfo gives for the host, in its order, without repeats."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(info[4][0] for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)))


def allowed_cidrs(registry, session) -> str:
    """The setting's value (environment first, as for every setting), "" when nobody set it."""
    return registry.get_or(session, SETTING, "") or ""


def fetch(method: str, url: str, *, headers: Mapping[str, str] | None = None, body: bytes | str | None = None,
          allowed_cidrs: str | Iterable = (), timeouts: Timeouts = Timeouts(), max_bytes: int = MAX_BODY_BYTES,
          max_redirects: int = MAX_REDIRECTS, resolver: Resolver = system_resolver,
          tls_context: ssl.SSLContext | None = None) -> Response:
    """Send one request and read the whole response (at most `max_bytes`), following up to
    `max_redirects` redirects. Raises OutboundRefused before anything is sent when the URL, method,
    headers or a destination (first or redirected) is not allowed; other OutboundErrors otherwise."""
    try:
        allowed = addresses.parse_cidrs(allowed_cidrs)
    except ValueError as exc:
        raise OutboundRefused(f"The setting {SETTING} is invalid: {exc}") from None
    method = check_method(method)
    sent_headers = check_headers(headers or {})
    sent_headers.setdefault("User-Agent", f"Tessera/{__version__}")
    payload = body.encode() if isinstance(body, str) else body
    deadline = time.monotonic() + timeouts.total
    target = parse_target(url)
    for hop in range(max_redirects + 1):
        checked = _check_destination(target, allowed, resolver)
        pool, response = _send(target, checked, method, sent_headers, payload, timeouts, deadline, tls_context)
        try:
            location = response.headers.get("location")
            if response.status not in REDIRECT_STATUSES or not location:
                return Response(response.status, _headers(response), _read(response, max_bytes, deadline, method), target.url)
        finally:
            response.release_conn()
            pool.close()
        if hop == max_redirects:
            raise OutboundRefused(f"Too many redirects: at most {max_redirects} are followed.")
        following = parse_target(urljoin(target.url, location))
        if following.origin != target.origin:
            sent_headers = {k: v for k, v in sent_headers.items() if k.lower() not in ORIGIN_BOUND}
        if response.status == 303 or (response.status in (301, 302) and method == "POST"):
            method, payload = ("HEAD" if method == "HEAD" else "GET"), None
            sent_headers = {k: v for k, v in sent_headers.items() if not k.lower().startswith("content-")}
        target = following
    raise AssertionError("unreachable")


def check_destination(url: str, *, allowed_cidrs: str | Iterable = (), resolver: Resolver = system_resolver) -> None:
    """Check a URL as `fetch` would before sending (parsed, resolved, every address allowed) without
    sending anything: for destinations stored now and called later (webhooks), so a refused one is
    reported when it is saved. Redirect hops are only known at send time, where `fetch` checks them."""
    try:
        allowed = addresses.parse_cidrs(allowed_cidrs)
    except ValueError as exc:
        raise OutboundRefused(f"The setting {SETTING} is invalid: {exc}") from None
    _check_destination(parse_target(url), allowed, resolver)


def _check_destination(target: Target, allowed, resolver: Resolver) -> tuple[str, ...]:
    """The host's addresses, resolved once; every one must pass, and only these are connected to."""
    try:
        found = list(target.literal_addresses() or resolver(target.host, target.port))
    except (OSError, UnicodeError):
        raise OutboundError(f"The host {target.host} could not be resolved.") from None
    if not found:
        raise OutboundError(f"The host {target.host} could not be resolved.")
    checked = []
    for text in found:
        ip = ipaddress.ip_address(text)
        kind = addresses.refusal(ip, allowed)
        if kind is not None:
            raise OutboundRefused(
                f"Requests to {target.host} are not allowed: it resolves to a {kind} address. "
                f"An administrator can allow internal networks in the setting {SETTING}.")
        checked.append(str(ip))
    return tuple(checked)


def _send(target: Target, checked: tuple[str, ...], method, headers, payload, timeouts: Timeouts, deadline: float, tls_context):
    """Open a connection to the first checked address that accepts one and send the request."""
    failure: Exception | None = None
    for address in checked:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        timeout = urllib3.Timeout(connect=min(timeouts.connect, remaining), read=min(timeouts.read, remaining))
        common = dict(port=target.port, timeout=timeout, maxsize=1, retries=False)
        if target.scheme == "https":
            context = tls_context or ssl.create_default_context()
            pool = urllib3.HTTPSConnectionPool(address, cert_reqs="CERT_REQUIRED", server_hostname=target.host,
                                               assert_hostname=target.host, ssl_context=context, **common)
        else:
            pool = urllib3.HTTPConnectionPool(address, **common)
        try:
            response = pool.urlopen(method, target.request_target, body=payload,
                                    headers={**headers, "Host": target.host_header}, redirect=False, retries=False,
                                    preload_content=False, assert_same_host=False, decode_content=True)
            if sum(1 for _ in response.headers.items()) > MAX_HEADERS:
                response.release_conn()
                pool.close()
                raise OutboundError(f"The response from {target.host} has more than {MAX_HEADERS} headers.")
            return pool, response
        except NewConnectionError as exc:
            failure = exc  # nothing was sent: the next checked address may be tried
        except ConnectTimeoutError as exc:
            failure = exc
        except SSLError as exc:
            pool.close()
            raise OutboundError(f"The TLS connection to {target.host} failed: {_reason(exc)}") from None
        except ReadTimeoutError:
            pool.close()
            raise OutboundTimeout(f"{target.host} did not answer within {timeouts.read:g} seconds.") from None
        except (HTTPError, OSError) as exc:
            pool.close()
            raise OutboundError(f"The request to {target.host} failed: {_reason(exc)}") from None
        pool.close()
    if isinstance(failure, NewConnectionError):
        raise OutboundError(f"Could not connect to {target.host}: {_reason(failure)}")
    raise OutboundTimeout(f"Could not connect to {target.host} within {timeouts.connect:g} seconds.")


def _read(response, max_bytes: int, deadline: float, method: str) -> bytes:
    declared = response.headers.get("content-length", "")
    if method != "HEAD" and declared.isdigit() and int(declared) > max_bytes:
        raise ResponseTooLarge(f"The response is larger than {max_bytes} bytes.")
    parts, size = [], 0
    try:
        while True:
            if time.monotonic() > deadline:
                raise OutboundTimeout("The response took too long to arrive.")
            chunk = response.read1(CHUNK)
            if not chunk:
                return b"".join(parts)
            size += len(chunk)
            if size > max_bytes:
                raise ResponseTooLarge(f"The response is larger than {max_bytes} bytes.")
            parts.append(chunk)
    except ReadTimeoutError:
        raise OutboundTimeout("The response stopped arriving before it was complete.") from None
    except (HTTPError, OSError) as exc:
        raise OutboundError(f"The response could not be read: {_reason(exc)}") from None


def _headers(response) -> dict[str, str]:
    joined: dict[str, str] = {}
    for name, value in response.headers.items():
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    return joined


def _reason(exc: Exception | None) -> str:
    """The cause without urllib3's prefixes (which name the pinned address rather than the host)."""
    text = str(getattr(exc, "reason", None) or exc or "no address answered")
    text = re.sub(r"<urllib3[^>]*>:?\s*|\w*Connection\(host=[^)]*\):\s*", "", text)
    return text.replace("Failed to establish a new connection: ", "")


def _valid_cidrs(value):
    try:
        return ",".join(str(net) for net in addresses.parse_cidrs(value))
    except ValueError as exc:
        raise Invalid({"value": str(exc)}) from None


@hookimpl
def register_settings():
    return [SettingDef(SETTING, default="", type="string", visibility="admin", validate=_valid_cidrs,
                       description="Internal networks (comma-separated CIDRs) that HTTP actions and webhooks may "
                                   "reach; public addresses are always allowed.")]
