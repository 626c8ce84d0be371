"""What an outbound request may say: the URL (scheme, host, port, request target), the method and the
headers, checked before anything is resolved or sent.

The rules refuse what would let request text change where or how a request goes (compat/security.md
threat rows 10-11): schemes other than http/https, user-info (`http://evil@127.0.0.1`), host text that
is not a plain DNS name or IP literal, control characters (CR/LF/NUL) in the URL, header names that
are not HTTP tokens, CR/LF/NUL in header values, and headers the client must set itself (Host and the
body framing).
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .errors import OutboundRefused

MAX_URL_LENGTH = 8192
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
DEFAULT_PORTS = {"http": 80, "https": 443}
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
HEADER_VALUE_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # horizontal tab is allowed in values
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
DNS_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?")
# Set by the client from the URL and the body; a caller's value could split or re-route the request.
RESERVED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "te", "upgrade"})
# Everything printable in ASCII stays as written (existing %XX escapes too); the rest is percent-encoded.
PRINTABLE = "".join(chr(c) for c in range(0x21, 0x7f))


def _refused(message: str) -> OutboundRefused:
    return OutboundRefused(message)


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # ASCII (IDNA), lower case, IPv6 without brackets
    port: int
    request_target: str  # path and query, as sent on the request line

    @property
    def is_ipv6(self) -> bool:
        return ":" in self.host

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if self.is_ipv6 else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return self.scheme, self.host, self.port

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host_header}{self.request_target}"

    def literal_addresses(self) -> tuple[str, ...]:
        """The host itself when it is an IP literal in canonical form (no DNS is asked), else ()."""
        try:
            return (str(ipaddress.ip_address(self.host)),)
        except ValueError:
            return ()


def parse_target(url: str) -> Target:
    if not isinstance(url, str) or not url:
        raise _refused("The URL is empty.")
    if len(url) > MAX_URL_LENGTH:
        raise _refused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if CONTROL.search(url):
        raise _refused("The URL must not contain control characters such as CR, LF or NUL.")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise _refused("The URL is not valid.") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise _refused("Only http and https URLs are allowed.")
    if "@" in parts.netloc:
        raise _refused("Credentials in the URL are not allowed; send them in a header.")
    host = _host(parts.netloc, parts.hostname or "")
    if port == 0:
        raise _refused("The URL's port is not valid.")
    path = quote(parts.path or "/", safe=PRINTABLE)
    if not path.startswith("/"):
        raise _refused("The URL is not valid.")
    query = quote(parts.query, safe=PRINTABLE)
    return Target(scheme, host, port or DEFAULT_PORTS[scheme], path + (f"?{query}" if query else ""))


def _host(netloc: str, hostname: str) -> str:
    if not hostname or "\\" in netloc:
        raise _refused("The URL has no valid host.")
    if netloc.startswith("["):
        try:
            address = ipaddress.IPv6Address(hostname)
        except ValueError:
            raise _refused("The URL has no valid host.") from None
        if address.scope_id:
            raise _refused("IPv6 zone identifiers are not allowed in URLs.")
        return str(address)
    try:
        ascii_host = hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise _refused(f"The host {hostname!r} is not a valid host name.") from None
    if not DNS_NAME.fullmatch(ascii_host) or len(ascii_host) > 254:
        raise _refused(f"The host {hostname!r} is not a valid host name.")
    return ascii_host


def check_method(method: str) -> str:
    upper = method.upper() if isinstance(method, str) else ""
    if upper not in METHODS:
        raise _refused(f"The HTTP method {method!r} is not supported; use one of {', '.join(METHODS)}.")
    return upper


def check_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers to send, with values as latin-1 text holding their UTF-8 bytes (what http.client
    writes), or OutboundRefused naming the first bad one."""
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not TOKEN.fullmatch(name):
            raise _refused(f"The header name {name!r} is not allowed: names are letters, digits and !#$%&'*+-.^_`|~.")
        if name.lower() in RESERVED_HEADERS:
            raise _refused(f"The header {name} is set by Tessera and cannot be given.")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise _refused(f"The value of the header {name} must be text.")
        text = str(value)
        if HEADER_VALUE_CONTROL.search(text):
            raise _refused(f"The value of the header {name} must not contain control characters such as CR, LF or NUL.")
        checked[name] = text.encode("utf-8").decode("latin-1")
    return checked
