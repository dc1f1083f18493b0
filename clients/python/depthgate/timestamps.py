"""Timestamps: the service writes UTC RFC 3339 with exactly three fraction digits (``2026-03-26T14:00:01.193Z``) and
reads any RFC 3339 date-time. Rows carry :class:`~datetime.datetime` values, aware and in UTC, at millisecond
precision (what the tables store).

A *moment* given to a call is an aware :class:`~datetime.datetime` (a ``pandas.Timestamp`` is one), RFC 3339 text,
or epoch milliseconds: an ``int``, or its text of 13 digits as the history API takes it (the one rule of
docs/history.md, "Parameters and their edges", which the TypeScript client follows too; the client sends RFC 3339
to the service either way). Naive datetimes, floats, dates without a time and 10-digit epoch seconds are refused: each is a guess
about a time zone or a unit. Sub-milliseconds (of the text, or a datetime's microseconds) round as the service rounds
its timestamp parameters: towards the inside of the range they bound — a range's start up (``"ceil"``), its end and a
moment down (``"floor"``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Optional, Tuple, Union

from ._text import format_timestamp as format_timestamp  # made in _text (a leaf: errors uses it too), given here
from .errors import InvalidArgumentError

UTC = timezone.utc
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
#: The last millisecond a moment can name (9999-12-31T23:59:59.999Z), in epoch milliseconds.
_LAST_MS = 253_402_300_799_999

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))",
    re.ASCII,  # \d: ASCII digits only, as the service and the TypeScript client read them
)
#: Epoch milliseconds as text, as the history API takes them: 13 digits, the first not 0 (2001-09-09 to 2286-11-20).
_EPOCH_MS_TEXT = re.compile(r"[1-9][0-9]{12}")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

Moment = Union[datetime, str, int]


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def parse_ms(text: str, rounding: str = "floor") -> Optional[int]:
    """Epoch milliseconds of an RFC 3339 date-time (a fraction of any length, sub-milliseconds rounded as ``rounding``
    says: down by default, up with ``"ceil"``), or None when it is not one (including impossible dates and offsets
    beyond ±23:59). A leap second (``:60``, RFC 3339 §5.7) is the next minute's first, as the service reads it."""
    if not isinstance(text, str):
        return None
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    if y < 1 or not 1 <= mo <= 12 or d < 1 or d > _DAYS[mo - 1] + (1 if mo == 2 and _leap(y) else 0):
        return None
    if h > 23 or mi > 59 or s > 60:
        return None
    offset = 0
    if m.group(9):
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            return None
        offset = (oh * 60 + om) * (-1 if m.group(9) == "-" else 1)
    frac = m.group(7) or ""
    ms = int((frac + "000")[:3]) + (1 if rounding == "ceil" and frac[3:].strip("0") else 0)
    days = (datetime(y, mo, d) - datetime(1970, 1, 1)).days
    return days * 86_400_000 + h * 3_600_000 + mi * 60_000 + s * 1000 + ms - offset * 60_000


#: The last text read and its datetime, as one tuple: replaced whole, so threads never see a text with another's value.
_memo: Tuple[str, datetime] = ("", EPOCH)


def parse_timestamp(text: str) -> Optional[datetime]:
    """The UTC datetime of an RFC 3339 date-time (sub-milliseconds dropped), or None when it is not one. Rows come in
    time order and many share a ``ts``, so the last text read is remembered."""
    global _memo
    memo = _memo
    if text == memo[0]:
        return memo[1]
    ms = parse_ms(text)
    if ms is None:
        return None
    dt = EPOCH + timedelta(milliseconds=ms)
    _memo = (text, dt)
    return dt


def from_ms(ms: int) -> datetime:
    """The UTC datetime of epoch milliseconds."""
    return EPOCH + timedelta(milliseconds=ms)


def to_ms(dt: datetime) -> int:
    """Epoch milliseconds of an aware datetime (sub-milliseconds dropped, towards the past)."""
    return (dt - EPOCH) // _MS


def moment(value: Moment, name: str = "moment", rounding: str = "floor") -> datetime:
    """A caller's moment as a UTC datetime at millisecond precision, sub-milliseconds rounded as ``rounding`` says
    (down by default; ``"ceil"`` for a range's start, as the service reads ``start_ts``); :class:`InvalidArgumentError`
    when it is not one (a naive datetime, a float, text that is not RFC 3339, a moment of any form outside the years
    1970–9999)."""
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{name} is a bool, not a moment")
    ms: Optional[int]
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidArgumentError(
                f"{name} is a naive datetime: give one with a time zone (datetime.now(timezone.utc))"
            )
        try:
            dt = value.astimezone(UTC)
        except OverflowError:  # an offset that carries it past the year 9999 or before the year 1
            ms = None
        else:
            # Below the millisecond: the microseconds past it, and a pandas.Timestamp's nanoseconds.
            below = dt.microsecond % 1000 or getattr(dt, "nanosecond", 0)
            ms = to_ms(dt) + (1 if below and rounding == "ceil" else 0)
        why = "is not between 1970 and 9999 (after rounding)"
    elif isinstance(value, int):
        ms = value
        why = "is not epoch milliseconds between 1970 and 9999"
    elif isinstance(value, str):
        ms = int(value) if _EPOCH_MS_TEXT.fullmatch(value) else parse_ms(value, rounding)
        why = (
            "is neither an RFC 3339 date-time between 1970 and 9999 (e.g. 2026-03-26T14:00:00Z)"
            " nor 13-digit epoch milliseconds (e.g. 1774533600000)"
        )
    else:
        raise InvalidArgumentError(
            f"{name} must be an aware datetime, RFC 3339 text or epoch milliseconds (int), not {type(value).__name__}"
        )
    # One range for every form: the moments RFC 3339 UTC text can name from the epoch on, as the TypeScript client.
    if ms is None or not 0 <= ms <= _LAST_MS:
        raise InvalidArgumentError(f"{name} {value!r} {why}")
    # A plain datetime: pandas.Timestamp is a datetime subclass; the rest of the client works with plain datetimes.
    return from_ms(ms)
