"""``GatewayClient``: the gateway's ``/api/v1/{platform}/{resource}`` (docs/gateway.md), thin. The gateway forwards the
resource and query to the platform and signs for it; this client sends the depthgate key (``X-API-Key``), retries
429 and 503 after their ``Retry-After`` (bounded), and turns error answers — the gateway's own
``{"error","message"}`` or an upstream's body passed through — into :class:`~depthgate.errors.HttpError`.

``platform`` is a neutral key (``venue-b``) or a real name (``kalshi``); ``resource`` is the platform's own path
(``markets``, ``markets/KX…/orderbook``). POSTs are the read-only batch reads the gateway forwards (docs/gateway.md,
"Read-only POSTs"); it answers 405 to any other.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, NamedTuple, Optional
from urllib.parse import quote

from .errors import DataError, InvalidArgumentError
from .http import Query, Transport

_PLATFORM = re.compile(r"[A-Za-z0-9-]{1,32}")
_SEGMENT = re.compile(r"[^/?#]+")
_JSON_TYPE = re.compile(r"application/([a-z0-9.+-]*\+)?json")


class GatewayResponse(NamedTuple):
    """An answer of the gateway (status below 400)."""

    status: int
    #: The body parsed as JSON when its type is JSON, else its text.
    data: Any
    headers: Mapping[str, str]
    #: X-Request-Id.
    request_id: Optional[str]
    #: X-Cache: HIT, MISS or COALESCED (forwarded answers).
    cache: Optional[str]


class GatewayClient:
    """The gateway. ``base_url`` (e.g. ``http://127.0.0.1:7080``) and ``api_key`` (``dg_…``); the other options are
    :class:`~depthgate.http.Transport`'s."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, **options: Any) -> None:
        self.http = Transport(base_url, api_key=api_key, **options)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "GatewayClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def call(
        self,
        platform: str,
        resource: str,
        query: Optional[Query] = None,
        *,
        method: str = "GET",
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> GatewayResponse:
        """``{method} /api/v1/{platform}/{resource}?{query}``: list values in ``query`` repeat the parameter; ``body``
        (POST) is sent as JSON."""
        if method not in ("GET", "POST"):
            raise InvalidArgumentError("method must be GET or POST (the gateway forwards reads only)")
        if not isinstance(platform, str) or _PLATFORM.fullmatch(platform) is None:
            raise InvalidArgumentError(f"not a platform: {platform!r}")
        segments = resource.lstrip("/").split("/")
        if resource not in ("", "/") and not all(_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments):
            raise InvalidArgumentError(f"not a resource path: {resource!r}")
        path = f"/api/v1/{platform}/" + ("" if resource in ("", "/") else "/".join(quote(s, safe="") for s in segments))
        sent = {"Accept": "application/json", **(headers or {})}
        data: Optional[bytes] = None
        if method == "POST":
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        answer = self.http.request(self.http.path(path, query), method=method, headers=sent, body=data)
        text = answer.text()
        value: Any = text
        if _JSON_TYPE.match(answer.content_type) and text != "":
            try:
                value = json.loads(text)
            except ValueError:
                raise DataError(
                    "malformed_body",
                    f"a {answer.content_type} body that is not JSON",
                    url=answer.url,
                    request_id=answer.request_id,
                    text=text[:200],
                ) from None
        return GatewayResponse(
            answer.status,
            value,
            answer.headers,
            answer.request_id,
            answer.response.getheader("x-cache"),
        )

    def get(self, platform: str, resource: str, query: Optional[Query] = None, **kw: Any) -> GatewayResponse:
        """``call`` with GET."""
        return self.call(platform, resource, query, **kw)

    def post(self, platform: str, resource: str, body: Any, query: Optional[Query] = None, **kw: Any) -> GatewayResponse:
        """``call`` with POST and a JSON body (the gateway's read-only batch reads)."""
        return self.call(platform, resource, query, method="POST", body=body, **kw)
