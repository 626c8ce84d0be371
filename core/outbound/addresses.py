"""Which IP addresses an outbound HTTP request may reach: public ones, plus an operator's allow-list.

compat/security.md section 4: the decision is taken on resolved addresses, never on host text
(`2130706433`, `0x7f000001` and `127.1` are all 127.0.0.1). Python's `is_global` is not enough on its
own: multicast, site-local, 6to4 and NAT64 forms of private addresses and 192.0.0.0/24 all count as
global in CPython 3.11 (the CVE-2024-4032 class), so those are checked here explicitly.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Instance-metadata endpoints of the clouds (AWS/GCP/Azure/OpenStack, AWS IPv6, Alibaba, Oracle).
METADATA = frozenset(ipaddress.ip_address(a) for a in
                     ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "192.0.0.192"))

# IANA special-purpose ranges, named, that a request must not reach even where is_global disagrees.
SPECIAL = tuple((ipaddress.ip_network(net), name) for net, name in (
    ("0.0.0.0/8", "this-network"),
    ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("192.0.0.0/24", "IETF protocol assignment"),
    ("192.0.2.0/24", "documentation"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("240.0.0.0/4", "reserved"),
    ("fc00::/7", "unique-local"),
    ("fec0::/10", "site-local"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"),
    ("2001::/23", "IETF protocol assignment"),
    ("2001:db8::/32", "documentation"),
))
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def parse_cidrs(value: str | Iterable[str | Network] | None) -> tuple[Network, ...]:
    """CIDRs from the setting's comma-separated text (or a list of texts or networks). A bare address
    is a one-address network; host bits are ignored (`127.0.0.1/8` is 127.0.0.0/8). Raises ValueError
    naming the first entry that is not a CIDR."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    networks = []
    for item in items:
        if isinstance(item, (ipaddress.IPv4Network, ipaddress.IPv6Network)):
            networks.append(item)
            continue
        text = str(item).strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not a CIDR such as 10.0.0.0/8 or fd00::/8.") from None
    return tuple(networks)


def is_allowed(ip: IPAddress, allowed: Iterable[Network]) -> bool:
    """Whether an operator's CIDR covers the address (an IPv4-mapped IPv6 address is its IPv4 one)."""
    forms = [ip]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        forms.append(ip.ipv4_mapped)
    return any(form.version == net.version and form in net for form in forms for net in allowed)


def non_public_kind(ip: IPAddress) -> str | None:
    """Why the address is not a public destination ("loopback", "private", ...), or None if it is."""
    if isinstance(ip, ipaddress.IPv6Address):
        ip = ip.ipv4_mapped or ip  # ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket
        if isinstance(ip, ipaddress.IPv6Address):
            embedded = ip.sixtofour or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in NAT64 else None)
            if embedded is not None:
                inner = non_public_kind(embedded)
                if inner is not None:
                    return f"{'6to4' if ip.sixtofour else 'NAT64'} form of a {inner}"
            if ip.teredo is not None:
                return "Teredo"
    if ip in METADATA:
        return "cloud metadata"
    for test, kind in ((ip.is_loopback, "loopback"), (ip.is_unspecified, "unspecified"),
                       (ip.is_link_local, "link-local"), (ip.is_multicast, "multicast")):
        if test:
            return kind
    for network, kind in SPECIAL:
        if ip.version == network.version and ip in network:
            return kind
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "non-public"
    return None


def refusal(ip: IPAddress, allowed: Iterable[Network] = ()) -> str | None:
    """None when a request may go to `ip`; otherwise the kind of address that stops it."""
    if is_allowed(ip, allowed):
        return None
    return non_public_kind(ip)
