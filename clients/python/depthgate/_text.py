"""The service's text of a value, made without checking it: a UTC timestamp with milliseconds and a finite decimal.

A leaf of the package (it imports nothing of it), so that :mod:`depthgate.errors` can name a row's moment and price
in its messages while :mod:`depthgate.timestamps` and :mod:`depthgate.decimals`, which check values and raise those
errors, give the same texts to callers (they re-export these).
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal


def format_timestamp(dt: datetime) -> str:
    """The service's form: ``2026-03-26T14:00:01.193Z`` (UTC, milliseconds)."""
    u = dt.astimezone(timezone.utc)
    return u.strftime("%Y-%m-%dT%H:%M:%S.") + f"{u.microsecond // 1000:03d}Z"


def decimal_text(d: Decimal) -> str:
    """The canonical text of a finite Decimal: no exponent, no trailing fraction zeros, no bare point, no ``-0``."""
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int), "a finite Decimal"
    text = "".join(map(str, digits))
    if exponent >= 0:
        whole, fraction = text + "0" * exponent, ""
    else:
        n = -exponent
        if len(text) <= n:
            text = "0" * (n - len(text) + 1) + text
        whole, fraction = text[:-n], text[-n:]
    whole = whole.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    out = whole + ("." + fraction if fraction else "")
    if out == "0":
        return "0"
    return "-" + out if sign else out
