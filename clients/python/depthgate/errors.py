"""Every failure the client reports is a :class:`DepthgateError` with a ``code`` naming what happened.

The hierarchy says where it happened::

    DepthgateError
    ├── HttpError            the service answered with an error status: .code is the service's own "error"
    │                        ("unknown_ticker", "rate_limited", …), .status, .message, .request_id, .retry_after
    ├── TransportError       no usable answer: "network_error" or "timeout"
    ├── DataError            an answer that cannot be trusted: "malformed_body", "malformed_row", "stream_cut",
    │                        "invalid_decimal"
    ├── BookError            a book that would be wrong: "negative_level", "crossed_book", "out_of_order",
    │                        "snapshot_mismatch", "in_gap", "no_snapshot"
    └── InvalidArgumentError a caller's argument out of range ("invalid_argument"; also a ValueError)

A stream that breaks is an error after the rows already given: an iterator never ends quietly short, and
``rebuild``/``replay`` never return a book built from part of the data.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Any, Optional

from ._text import decimal_text, format_timestamp


class DepthgateError(Exception):
    """The base of every error of this package; ``code`` is one word, ``message`` the text."""

    code: str
    message: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class HttpError(DepthgateError):
    """An error answer (status 400 and above).

    ``code`` is the service's ``error`` field (``"unknown_ticker"``, ``"rate_limited"``, ``"invalid_cursor"``…);
    ``"http_error"`` when the body is JSON without one (an upstream's own error through the gateway), and
    ``"non_json_error_body"`` when the body is not JSON (a proxy's HTML page, an empty body).
    """

    status: int
    #: The body parsed as JSON; None when it is not JSON.
    json: Any
    #: The first 500 characters of the body.
    body: str
    #: The answer's X-Request-Id (quote it when reporting a problem).
    request_id: Optional[str]
    #: The request's method and URL.
    url: str
    #: Retry-After of the answer, in seconds (None when absent).
    retry_after: Optional[float]

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        json_body: Any,
        body: str,
        request_id: Optional[str],
        url: str,
        retry_after: Optional[float],
    ) -> None:
        text = f"{url} → {status} {code}: {message}" + (f" (request id {request_id})" if request_id else "")
        super().__init__(code, text)
        # ``message`` is the service's own message; str(error) carries the status, URL and request id too.
        self.message = message
        self.status = status
        self.json = json_body
        self.body = body
        self.request_id = request_id
        self.url = url
        self.retry_after = retry_after


class TransportError(DepthgateError):
    """No usable answer: ``network_error`` (refused, reset, DNS), ``timeout``, or ``redirect`` (a redirect not followed:
    to another origin, where the key is never sent, or the sixth within the service's)."""

    url: str
    #: Our X-Request-Id of the last attempt (the service logs it).
    request_id: Optional[str]

    def __init__(self, code: str, message: str, url: str, request_id: Optional[str]) -> None:
        super().__init__(code, message + (f" (request id {request_id})" if request_id else ""))
        self.url = url
        self.request_id = request_id


class DataError(DepthgateError):
    """Data that cannot be trusted: ``malformed_body``, ``malformed_row``, ``stream_cut`` or ``invalid_decimal``.

    ``line`` is the 1-based line of a stream (or the row's index + 1 in a JSON ``rows`` array), ``text`` the
    offending text (at most 200 characters).
    """

    url: Optional[str]
    request_id: Optional[str]
    line: Optional[int]
    text: Optional[str]

    def __init__(
        self,
        code: str,
        message: str,
        *,
        url: Optional[str] = None,
        request_id: Optional[str] = None,
        line: Optional[int] = None,
        text: Optional[str] = None,
    ) -> None:
        parts = []
        if line is not None:
            parts.append(f"line {line}")
        if url:
            parts.append(url)
        if request_id:
            parts.append(f"request id {request_id}")
        full = message + (f" ({', '.join(parts)})" if parts else "")
        if text is not None:
            full += ": " + json.dumps(text[:200], ensure_ascii=False)
        super().__init__(code, full)
        self.url = url
        self.request_id = request_id
        self.line = line
        self.text = None if text is None else text[:200]


class BookError(DepthgateError):
    """A book that would be wrong, with where it happened (``exchange``, ``ticker``, ``ts``, ``sequence``, ``side``,
    ``price``, each None when not known)."""

    exchange: Optional[str]
    ticker: Optional[str]
    ts: Optional[datetime]
    sequence: Optional[int]
    side: Optional[str]
    price: Any

    def __init__(
        self,
        code: str,
        message: str,
        *,
        exchange: Optional[str] = None,
        ticker: Optional[str] = None,
        ts: Optional[datetime] = None,
        sequence: Optional[int] = None,
        side: Optional[str] = None,
        price: Any = None,
    ) -> None:
        parts = [p for p in (exchange, ticker) if p is not None]
        if ts is not None:
            parts.append(f"ts {format_timestamp(ts)}")
        if sequence is not None:
            parts.append(f"sequence {sequence}")
        if side is not None:
            parts.append(side)
        if price is not None:
            shown = decimal_text(price) if isinstance(price, Decimal) and price.is_finite() else str(price)
            parts.append(f"price {shown}")
        super().__init__(code, message + (f" ({', '.join(parts)})" if parts else ""))
        self.exchange = exchange
        self.ticker = ticker
        self.ts = ts
        self.sequence = sequence
        self.side = side
        self.price = price


class InvalidArgumentError(DepthgateError, ValueError):
    """A caller's argument out of range (a moment that is not one, a depth ≤ 0, …)."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_argument", message)
