"""Who may talk to the HTTP server: one bind policy, Origin on every bind, bearer tokens.

A loopback bind refuses a non-loopback ``Host`` (421); a foreign ``Origin`` is refused (403);
with a token every request needs ``Authorization: Bearer`` (401). See docs/security.md.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from workspace_tools.core.errors import InvalidInputError

__all__ = [
    "MIN_TOKEN_CHARS",
    "TOKEN_ENV",
    "HttpGuard",
    "HttpPolicy",
    "http_policy",
    "is_loopback",
]

TOKEN_ENV: Final = "WORKSPACE_TOOLS_MCP_TOKEN"  # noqa: S105 - a variable name
"""Environment variable holding the bearer token of the HTTP server."""
MIN_TOKEN_CHARS: Final = 16
"""Shortest token accepted (e.g. ``python -c "import secrets; print(secrets.token_urlsafe())"``)."""

_LOG = logging.getLogger("workspace_tools.mcp")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True when ``host`` (a name or an address, bracketed or not) is a loopback host."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


@dataclass(frozen=True, slots=True)
class HttpPolicy:
    """The checks one HTTP server makes on every request."""

    loopback: bool
    """The bind address is loopback: ``Host`` must be a loopback host too."""
    token: str | None = None
    """Bearer token every request must carry (``None``: no authentication)."""
    allowed_origins: tuple[str, ...] = ()
    """Origins allowed besides loopback ones (``scheme://host[:port]``, lower case)."""


def http_policy(
    host: str,
    *,
    token: str | None = None,
    allowed_origins: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> HttpPolicy:
    """The policy of a server bound to ``host``; the token defaults to :data:`TOKEN_ENV`.

    Raises:
        InvalidInputError: A non-loopback bind without a token, a short token or a bad origin.
    """
    env = os.environ if environ is None else environ
    secret = token if token is not None else (env.get(TOKEN_ENV) or None)
    loopback = is_loopback(host)
    if secret is not None and (len(secret) < MIN_TOKEN_CHARS or secret != secret.strip()):
        msg = (
            f"The MCP auth token must be at least {MIN_TOKEN_CHARS} characters without "
            'surrounding spaces; make one with: python -c "import secrets; '
            'print(secrets.token_urlsafe())"'
        )
        raise InvalidInputError(msg)
    if not loopback and secret is None:
        msg = (
            f"Refusing to serve MCP over HTTP on {host!r} without authentication: that address "
            "is reachable from other machines, and every tool (indexing included) would be "
            f"open to them. Set {TOKEN_ENV} (or pass --auth-token TOKEN) and send "
            "'Authorization: Bearer TOKEN', or bind to 127.0.0.1."
        )
        raise InvalidInputError(msg)
    origins = tuple(_origin(o, given=o) for o in allowed_origins)
    return HttpPolicy(loopback=loopback, token=secret, allowed_origins=origins)


def _origin(value: str, *, given: str) -> str:
    parts = urlsplit(value.strip().lower())
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path not in {"", "/"}:
        msg = (
            f"--allow-origin takes scheme://host[:port] (e.g. https://app.example), got {given!r}."
        )
        raise InvalidInputError(msg)
    return f"{parts.scheme}://{parts.netloc}"


class HttpGuard:
    """ASGI middleware applying an :class:`HttpPolicy` before the MCP endpoint sees a request."""

    def __init__(self, app: App, policy: HttpPolicy) -> None:
        self.app = app
        self.policy = policy
        self._token = policy.token.encode() if policy.token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an allowed HTTP request (and any non-HTTP scope) on; refuse the others."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, text, extra = refusal
        _LOG.warning("Refused an HTTP request (%d): %s", status, text)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": text}}
        ).encode()
        response_headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": body})

    def _refusal(
        self, headers: Mapping[str, str]
    ) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        if self.policy.loopback:
            host = headers.get("host", "")
            if not host or not is_loopback(_host_name(host)):
                return 421, f"Host {host[:100]!r} is not a loopback host of this server.", []
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return 403, f"Origin {origin[:100]!r} is not allowed to use this server.", []
        if self._token is not None:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            supplied = given.strip().encode("utf-8", "surrogateescape")
            valid = scheme.lower() == "bearer" and hmac.compare_digest(supplied, self._token)
            if not valid:
                challenge = [(b"www-authenticate", b'Bearer realm="workspace-tools"')]
                return (
                    401,
                    "Missing or wrong bearer token (Authorization: Bearer TOKEN).",
                    challenge,
                )
        return None

    def _origin_allowed(self, origin: str) -> bool:
        parts = urlsplit(origin.strip().lower())
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            return False
        if is_loopback(parts.hostname):
            return True
        return f"{parts.scheme}://{parts.netloc}" in self.policy.allowed_origins


def _host_name(host: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8765`` -> ``::1``, ``a:80`` -> ``a``)."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
