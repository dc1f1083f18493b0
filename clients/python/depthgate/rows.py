"""The rows of the history service as typed, immutable values, and their parsers.

A row is checked when it is parsed: every field present with its type, ``side`` one of its values, decimals in
plain notation (→ :class:`~decimal.Decimal`), timestamps RFC 3339 (→ aware UTC :class:`~datetime.datetime`),
``sequence`` a non-negative integer. Anything else is a :class:`~depthgate.errors.DataError` (``malformed_row``)
naming the line; nothing half-parsed reaches a book. Fields a row does not know are ignored (a newer service may
add some).

Each row endpoint is a :class:`Kind`: its path segment, its parser and what it supports. Adding an endpoint of rows
is one ``Kind`` and one method of :class:`~depthgate.history.HistoryClient`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Dict, Generic, NamedTuple, Optional, Tuple, Type, TypeVar, Union

from .decimals import _PLAIN
from .errors import DataError
from .timestamps import parse_timestamp


class SnapshotRow(NamedTuple):
    """One price level of a full book at ``ts`` (every row of a book shares its ``ts``)."""

    ts: datetime
    side: str  # "bid" | "ask"
    price: Decimal
    quantity: Decimal
    #: When the recorder received it (only with ``fields=["received_ts"]``).
    received_ts: Optional[datetime] = None
    #: The venue's own ordering of the message the row came from (only with ``fields=["venue_seq"]``; ``""`` where the
    #: venue has none).
    venue_seq: Optional[str] = None


class DeltaRow(NamedTuple):
    """One level change: add ``quantity_delta`` to the quantity at (``side``, ``price``)."""

    ts: datetime
    #: Orders deltas that share a ``ts`` (strictly increasing per ticker).
    sequence: int
    side: str  # "bid" | "ask"
    price: Decimal
    quantity_delta: Decimal
    received_ts: Optional[datetime] = None
    venue_seq: Optional[str] = None


class TradeRow(NamedTuple):
    """One trade (``GET /api/{exchange}/trades/{ticker}``, and ``include=trades`` lines among deltas).

    Follows the documented shape (docs/history.md, "Trades"):
    ``side`` is the taker's, normalised to the book (``"buy"`` | ``"sell"``); ``received_ts``, ``venue_side`` and
    ``sequence`` and ``venue_seq`` only when asked for with ``fields``.
    """

    ts: datetime
    trade_id: str
    price: Decimal
    size: Decimal
    side: str  # "buy" | "sell"
    received_ts: Optional[datetime] = None
    venue_side: Optional[str] = None
    sequence: Optional[int] = None
    venue_seq: Optional[str] = None


class Bar(NamedTuple):
    """One bar of ``GET /api/{exchange}/bars/{ticker}`` (documented shape, as :class:`TradeRow`): ``ts`` is the bar's
    start; bars without trades are absent."""

    ts: datetime
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal
    vwap: Decimal
    trades: int


class Gap(NamedTuple):
    """A stretch where the recorded series is not continuous: no book can be given for ``[from_ts, to_ts)``."""

    from_ts: datetime
    to_ts: datetime
    reason: str
    detected_at: Optional[datetime] = None


class TradesGap(Gap):
    """A stretch where the recorded trades may be incomplete (``{"type":"trades_gap",…}``, deltas with
    ``trades=True, gaps=True``): the book is not affected. A :class:`Gap` too, so code that treats every gap alike
    still sees it."""

    __slots__ = ()


class EndLine(NamedTuple):
    """The last line of an NDJSON stream: the row count, and where to continue when the stream stopped early."""

    count: int
    next_cursor: Optional[str]


Row = Union[SnapshotRow, DeltaRow, TradeRow, Bar]
R = TypeVar("R", SnapshotRow, DeltaRow, TradeRow, Bar)


class Where:
    """Where a row was read (for error messages): the request, and the line."""

    __slots__ = ("url", "request_id", "line")

    def __init__(self, url: Optional[str] = None, request_id: Optional[str] = None, line: int = 0) -> None:
        self.url = url
        self.request_id = request_id
        self.line = line


def _malformed(why: str, where: Where, value: Any) -> DataError:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return DataError(
        "malformed_row", why, url=where.url, request_id=where.request_id, line=where.line or None, text=text
    )


def _obj(value: Any, where: Where) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise _malformed("a row is not a JSON object", where, value)
    return value


def _ts(o: Dict[str, Any], name: str, where: Where) -> datetime:
    v = o.get(name)
    dt = parse_timestamp(v) if isinstance(v, str) else None
    if dt is None:
        raise _malformed(f"{name} is not an RFC 3339 timestamp", where, o)
    return dt


def _opt_ts(o: Dict[str, Any], name: str, where: Where) -> Optional[datetime]:
    return None if o.get(name) is None else _ts(o, name, where)


def _dec(o: Dict[str, Any], name: str, where: Where) -> Decimal:
    v = o.get(name)
    if not isinstance(v, str) or _PLAIN.fullmatch(v) is None:
        raise _malformed(f"{name} is not a decimal string", where, o)
    return Decimal(v)


def _int(o: Dict[str, Any], name: str, where: Where) -> int:
    v = o.get(name)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise _malformed(f"{name} is not a non-negative integer", where, o)
    return v


def _choice(o: Dict[str, Any], name: str, values: Tuple[str, ...], where: Where) -> str:
    v = o.get(name)
    if v not in values:
        raise _malformed(f"{name} is none of {', '.join(values)}", where, o)
    return v  # type: ignore[no-any-return]


def _str(o: Dict[str, Any], name: str, where: Where) -> str:
    v = o.get(name)
    if not isinstance(v, str):
        raise _malformed(f"{name} is not a string", where, o)
    return v


def _opt_str(o: Dict[str, Any], name: str, where: Where) -> Optional[str]:
    return None if o.get(name) is None else _str(o, name, where)


_SIDES = ("bid", "ask")


def parse_snapshot(value: Any, where: Where) -> SnapshotRow:
    o = _obj(value, where)
    return SnapshotRow(
        _ts(o, "ts", where),
        _choice(o, "side", _SIDES, where),
        _dec(o, "price", where),
        _dec(o, "quantity", where),
        _opt_ts(o, "received_ts", where),
        _opt_str(o, "venue_seq", where),
    )


class DigestLine(NamedTuple):
    """A recorded book as its digest (``format=digest`` on the snapshots endpoint; :mod:`depthgate.digest`)."""

    ts: datetime
    levels: int
    #: Decimal text of an integer in [0, 2**61 − 1).
    digest: str


_DIGEST = re.compile(r"0|[1-9][0-9]{0,18}")


def parse_digest(value: Any, where: Where) -> DigestLine:
    o = _obj(value, where)
    levels = _int(o, "levels", where)
    digest = o.get("digest")
    if not isinstance(digest, str) or _DIGEST.fullmatch(digest) is None:
        raise _malformed("not a digest line (ts, levels, digest: a decimal integer)", where, o)
    return DigestLine(_ts(o, "ts", where), levels, digest)


def parse_delta(value: Any, where: Where) -> DeltaRow:
    o = _obj(value, where)
    return DeltaRow(
        _ts(o, "ts", where),
        _int(o, "sequence", where),
        _choice(o, "side", _SIDES, where),
        _dec(o, "price", where),
        _dec(o, "quantity_delta", where),
        _opt_ts(o, "received_ts", where),
        _opt_str(o, "venue_seq", where),
    )


def parse_trade(value: Any, where: Where) -> TradeRow:
    o = _obj(value, where)
    return TradeRow(
        _ts(o, "ts", where),
        _str(o, "trade_id", where),
        _dec(o, "price", where),
        _dec(o, "size", where),
        _choice(o, "side", ("buy", "sell"), where),
        _opt_ts(o, "received_ts", where),
        _opt_str(o, "venue_side", where),
        None if o.get("sequence") is None else _int(o, "sequence", where),
        _opt_str(o, "venue_seq", where),
    )


def parse_bar(value: Any, where: Where) -> Bar:
    o = _obj(value, where)
    return Bar(
        _ts(o, "ts", where),
        _dec(o, "open", where),
        _dec(o, "high", where),
        _dec(o, "low", where),
        _dec(o, "close", where),
        _dec(o, "volume", where),
        _dec(o, "vwap", where),
        _int(o, "trades", where),
    )


def parse_gap(value: Any, where: Where, cls: Type[Gap] = Gap) -> Gap:
    o = _obj(value, where)
    if not isinstance(o.get("reason"), str):
        raise _malformed("a gap has no reason", where, o)
    return cls(_ts(o, "from_ts", where), _ts(o, "to_ts", where), o["reason"], _opt_ts(o, "detected_at", where))


@dataclass(frozen=True)
class Kind(Generic[R]):
    """A row endpoint: ``/api/{exchange}/{endpoint}/{ticker}``."""

    #: The row kind's name, as in messages (``"snapshot"``).
    name: str
    #: The path segment (``"snapshots"``).
    endpoint: str
    parse: Callable[[Any, Where], R]
    #: The service streams it as NDJSON (``format=ndjson``); else pages only.
    streams: bool = True
    #: Pages never cut a moment's rows (snapshots: whole books), so a service without cursors pages on by
    #: ``start_ts`` = the last ``ts`` + 1 ms; else by the last ``ts``, skipping what was given (``resume_key``).
    whole_moments: bool = False
    #: For paging by ``start_ts`` on a service without cursors: the key that orders rows sharing a ``ts``.
    resume_key: Optional[Callable[[Any], Tuple[datetime, int]]] = None
    #: The row's fields.
    columns: Tuple[str, ...] = ()


SNAPSHOTS: Kind[SnapshotRow] = Kind(
    "snapshot", "snapshots", parse_snapshot, whole_moments=True, columns=SnapshotRow._fields
)
DELTAS: Kind[DeltaRow] = Kind(
    "delta", "deltas", parse_delta, resume_key=lambda r: (r.ts, r.sequence), columns=DeltaRow._fields
)
TRADES: Kind[TradeRow] = Kind("trade", "trades", parse_trade, columns=TradeRow._fields)
#: The snapshots' digests: asked for with ``format=digest`` (series' ``query``), one line per book.
DIGESTS: Kind[DigestLine] = Kind("digest", "snapshots", parse_digest, whole_moments=True, columns=DigestLine._fields)
BARS: Kind[Bar] = Kind("bar", "bars", parse_bar, streams=False, columns=Bar._fields)


def parse_line(kind: Kind[Any], line: str, where: Where) -> Union[Row, Gap, EndLine]:
    """One NDJSON line of a rows stream: a row of ``kind``, a ``{"type":"gap",…}`` marker, a
    ``{"type":"trade",…}`` line (deltas with ``include=trades``; with gaps also ``{"type":"trades_gap",…}``) or the
    ``{"type":"end",…}`` line."""
    try:
        value = json.loads(line)
    except ValueError:
        raise _malformed("not a JSON line", where, line) from None
    if isinstance(value, dict) and "type" in value:
        t = value["type"]
        if t == "gap":
            return parse_gap(value, where)
        if t == "trades_gap":
            return parse_gap(value, where, TradesGap)
        if t == "end":
            count, cursor = value.get("count"), value.get("next_cursor")
            if (
                not isinstance(count, int)
                or isinstance(count, bool)
                or count < 0
                or not (cursor is None or isinstance(cursor, str))
            ):
                raise _malformed("an end line without count and next_cursor", where, line)
            return EndLine(count, cursor)
        if t == "trade":
            return parse_trade(value, where)
        raise _malformed(f"unknown line type {json.dumps(t)}", where, line)
    return kind.parse(value, where)
