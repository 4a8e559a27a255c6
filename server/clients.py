"""Who a request comes from: the one key every per-client limit counts by (quotas, write and check buckets,
connections, answers not yet read, the worker pools' turns, training shares).

A client is the peer address of its connection, unless the operator names the reverse proxies in front
of rasplay (`rasplay serve --trusted-proxy 127.0.0.1,10.0.0.0/8`, or RASPLAY_TRUSTED_PROXY). Then, for a
connection from one of them, the client is read from the proxy's header (X-Forwarded-For by default, or
the standard Forwarded header with `--proxy-header forwarded`): the right-most address in it that is
not itself a trusted proxy. Everything left of that was written by the client and is ignored, so a client
cannot choose its own address; a connection from any other peer has its headers ignored entirely.

Only one header is read: a proxy sets one of them and passes the other through as the client sent it, so
reading both would let a client write its own address."""
from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Iterable

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
HEADERS = {"x-forwarded-for": b"x-forwarded-for", "forwarded": b"forwarded"}


def parse_networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """'127.0.0.1, 10.0.0.0/8, ::1' -> networks; a ValueError naming the entry that is not one."""
    networks = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"not an address or network: {part!r} (say e.g. 127.0.0.1 or 10.0.0.0/8)") from None
    return tuple(networks)


def _address(text: str) -> Address | None:
    """An address as proxies write it (bare, [v6], with a port, quoted), or None for anything else
    (`unknown`, an obfuscated `_name`, garbage)."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:   # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _hops_forwarded_for(values: list[str]) -> list[Address | None]:
    return [_address(part) for value in values for part in value.split(",")]


def _hops_forwarded(values: list[str]) -> list[Address | None]:
    """The `for=` of each element of Forwarded headers (RFC 7239); an element without one is not an address."""
    hops = []
    for value in values:
        for element in value.split(","):
            found = None
            for pair in element.split(";"):
                key, _, val = pair.partition("=")
                if key.strip().lower() == "for":
                    found = _address(val)
            hops.append(found)
    return hops


class Proxies:
    """The reverse proxies the operator trusts, and the header they write."""

    def __init__(self, networks: Iterable = (), header: str = "x-forwarded-for"):
        self.networks = tuple(networks)
        if header not in HEADERS:
            raise ValueError(f"the proxy header is one of {', '.join(HEADERS)} (got {header!r})")
        self.header = HEADERS[header]
        self._hops = _hops_forwarded if header == "forwarded" else _hops_forwarded_for

    def trusts(self, host: str | None) -> bool:
        if not self.networks or host is None:
            return False
        address = _address(host)
        return address is not None and self._trusted(address)

    def _trusted(self, address: Address) -> bool:
        return any(address.version == n.version and address in n for n in self.networks)

    def client(self, peer: str | None, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """The client of a request from `peer` with these (lower-case name, value) headers."""
        if peer is None:
            return "unknown"
        if not self.networks:
            return peer
        address = _address(peer)
        if address is None or not self._trusted(address):
            return peer
        values = [v.decode("latin-1") for k, v in headers if k.lower() == self.header]
        client = address
        for hop in reversed(self._hops(values)):
            if hop is None:   # a trusted proxy writes an address: this part came from elsewhere
                break
            client = hop
            if not self._trusted(hop):
                break
        return str(client)


@lru_cache(maxsize=16)
def proxies(trusted: tuple[str, ...], header: str = "x-forwarded-for") -> Proxies:
    """The Proxies of settings' `trusted_proxies` (each entry a comma-separated list) and `proxy_header`."""
    return Proxies([n for entry in trusted for n in parse_networks(entry)], header)


def client_of(request) -> str:
    """The client of a request (computed once per request)."""
    scope = request.scope
    client = scope.get("rasplay.client")
    if client is None:
        settings = request.app.state.settings
        peer = scope["client"][0] if scope.get("client") else None
        client = proxies(settings.trusted_proxies, settings.proxy_header).client(peer, scope["headers"])
        scope["rasplay.client"] = client
    return client
