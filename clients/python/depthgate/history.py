"""``HistoryClient``: the history service (docs/history.md) as typed calls and iterators.

- ``tickers``; ``snapshots``, ``deltas`` and ``trades`` as iterators over a whole range (the NDJSON stream, read line
  by line, following its ``next_cursor`` when it stops early; or JSON pages following ``next_cursor``); ``bars``
  (pages); one page of each with ``*_page``.
- ``coverage``, ``book`` (the service's book at a moment), and rule 7 on this side: ``rebuild`` (an
  :class:`~depthgate.order_book.OrderBook` at a moment), ``replay`` (the book after each moment of a range, gaps
  reported, never papered over) and ``books_at`` (the book at many moments in one pass).

Rows are checked as they are parsed; a malformed row, a cut stream or an error answer is a typed error
(:mod:`depthgate.errors`), never a short or wrong result.

``trades``, ``trade_page``, ``bars`` and ``deltas(trades=True)`` read the service's trades API
(``/api/{exchange}/trades/{ticker}``, ``/bars/{ticker}``, ``include=trades``; docs/history.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from .answers import Coverage, ServiceBook, _malformed, parse_book, parse_coverage
from .errors import InvalidArgumentError
from .http import Transport
from .order_book import OrderBook
from .replay import BookAt, ReplayEvent, books_at, rebuild_at, starting_book, walk
from .rows import BARS, DELTAS, SNAPSHOTS, TRADES, Bar, DeltaRow, Gap, Kind, SnapshotRow, TradeRow
from .series import Page, RowStream, check_page, history_path, iso, parse_json_body, series
from .timestamps import Moment, moment, to_ms

__all__ = ["HistoryClient"]

#: Bar intervals of ``/bars`` (documented shape).
BAR_INTERVALS = ("1m", "5m", "1h", "1d")
#: Extra row fields of each endpoint (``fields=``).
_FIELDS = {
    "snapshot": ("received_ts", "venue_seq"),
    "delta": ("received_ts", "venue_seq"),
    "trade": ("received_ts", "venue_side", "sequence", "venue_seq"),
}


def _optional_moment(value: Optional[Moment], name: str, rounding: str = "floor") -> Optional[datetime]:
    """A moment parameter, if given (a range's start: ``rounding="ceil"``, as the service reads ``start_ts``)."""
    return None if value is None else moment(value, name, rounding)


def _fields(kind: str, fields: Sequence[str]) -> Sequence[str]:
    if isinstance(fields, str):
        fields = [f.strip() for f in fields.split(",") if f.strip()]
    allowed = _FIELDS.get(kind, ())
    for f in fields:
        if f not in allowed:
            raise InvalidArgumentError(f"fields: {f!r} is not one of {', '.join(allowed)}")
    return list(fields)


class HistoryClient:
    """The history service. ``base_url`` (e.g. ``http://127.0.0.1:7081``) and ``api_key`` (``dg_…``, sent as
    ``x-api-key``); the other options are :class:`~depthgate.http.Transport`'s (timeouts, retries, headers).

    Moments are aware datetimes (a ``pandas.Timestamp`` is one), RFC 3339 text, or ints of epoch milliseconds.
    """

    def __init__(self, base_url: str, api_key: Optional[str] = None, **options: Any) -> None:
        self.http = Transport(base_url, api_key=api_key, **options)

    def close(self) -> None:
        """Closes idle connections."""
        self.http.close()

    def __enter__(self) -> "HistoryClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------------------------------------------------------------------------------- one request

    def _json(self, path: str, query: Dict[str, Any]) -> tuple:
        answer = self.http.request(self.http.path(path, query), headers={"Accept": "application/json"})
        return answer, parse_json_body(answer, answer.text())

    def tickers(self, exchange: str, prefix: Optional[str] = None) -> List[str]:
        """Tickers of an exchange with data in the caller's window, sorted; ``prefix`` filters case-insensitively."""
        answer, body = self._json(history_path(exchange, "tickers"), {"prefix": prefix})
        tickers = body.get("tickers")
        if not isinstance(tickers, list) or not all(isinstance(t, str) for t in tickers):
            raise _malformed(answer, 'a tickers answer without a "tickers" list of strings')
        return tickers

    def coverage(
        self, exchange: str, ticker: str, start: Optional[Moment] = None, end: Optional[Moment] = None
    ) -> Coverage:
        """What is recorded for a ticker in a window (first/last ts and rows per kind), and every gap overlapping it."""
        answer, body = self._json(
            history_path(exchange, "coverage", ticker),
            {"start_ts": iso(_optional_moment(start, "start", "ceil")), "end_ts": iso(_optional_moment(end, "end"))},
        )
        return parse_coverage(answer, body)

    def book(
        self, exchange: str, ticker: str, at: Optional[Moment] = None, depth: Optional[int] = None
    ) -> ServiceBook:
        """The service's own book at a moment (rule 7 on the server); ``at`` omitted: the newest state."""
        if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth <= 0):
            raise InvalidArgumentError("depth must be a positive integer")
        answer, body = self._json(
            history_path(exchange, "book", ticker), {"at": iso(_optional_moment(at, "at")), "depth": depth}
        )
        return parse_book(answer, body)

    def _page(self, kind: Kind[Any], exchange: str, ticker: str, **o: Any) -> Page[Any]:
        limit = o.get("limit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0):
            raise InvalidArgumentError("limit must be a positive integer")
        include = ["gaps"] if o.get("gaps") else []
        target = self.http.path(
            history_path(exchange, kind.endpoint, ticker),
            {
                "start_ts": iso(_optional_moment(o.get("start"), "start", "ceil")),
                "end_ts": iso(_optional_moment(o.get("end"), "end")),
                "limit": limit,
                "cursor": o.get("cursor"),
                "fields": ",".join(_fields(kind.name, o.get("fields") or ())) or None,
                "include": ",".join(include) or None,
                "format": "json",
                **(o.get("query") or {}),
            },
        )
        answer = self.http.request(target, headers={"Accept": "application/json"})
        return check_page(kind, answer, answer.text())

    def snapshot_page(
        self,
        exchange: str,
        ticker: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        fields: Sequence[str] = (),
        gaps: bool = False,
    ) -> Page[SnapshotRow]:
        """One JSON page of snapshot rows (whole books), with ``next_cursor``."""
        return self._page(SNAPSHOTS, exchange, ticker, start=start, end=end, limit=limit, cursor=cursor, fields=fields, gaps=gaps)

    def delta_page(
        self,
        exchange: str,
        ticker: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        fields: Sequence[str] = (),
        gaps: bool = False,
    ) -> Page[DeltaRow]:
        """One JSON page of delta rows, with ``next_cursor``."""
        return self._page(DELTAS, exchange, ticker, start=start, end=end, limit=limit, cursor=cursor, fields=fields, gaps=gaps)

    def trade_page(
        self,
        exchange: str,
        ticker: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        fields: Sequence[str] = (),
        gaps: bool = False,
    ) -> Page[TradeRow]:
        """One JSON page of trades (documented shape; see the module's note)."""
        return self._page(TRADES, exchange, ticker, start=start, end=end, limit=limit, cursor=cursor, fields=fields, gaps=gaps)

    # ---------------------------------------------------------------------------------------- whole ranges

    def _range(self, kind: Kind[Any], exchange: str, ticker: str, o: Dict[str, Any], include: List[str]) -> RowStream[Any]:
        history_path(exchange, kind.endpoint, ticker)  # checked now, not at the first next()
        return RowStream(
            series(
                self.http,
                kind,
                exchange,
                ticker,
                start=_optional_moment(o.get("start"), "start", "ceil"),
                end=_optional_moment(o.get("end"), "end"),
                page_size=o.get("page_size"),
                fields=_fields(kind.name, o.get("fields") or ()),
                include=include + (["gaps"] if o.get("gaps") else []),
                transport=o.get("transport") or "stream",
                query=o.get("query"),
            ),
            kind.columns,
        )

    def snapshots(
        self,
        exchange: str,
        ticker: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        page_size: Optional[int] = None,
        fields: Sequence[str] = (),
        gaps: bool = False,
        transport: str = "stream",
    ) -> "RowStream[Union[SnapshotRow, Gap]]":
        """Every snapshot row of a range, in order (books whole, bids then asks by price); with ``gaps=True`` the
        recorded gaps as :class:`Gap` values among them. ``transport``: ``"stream"`` (NDJSON, the default) or
        ``"pages"`` (JSON pages of ``page_size`` rows)."""
        o = dict(start=start, end=end, page_size=page_size, fields=fields, gaps=gaps, transport=transport)
        return self._range(SNAPSHOTS, exchange, ticker, o, [])

    def deltas(
        self,
        exchange: str,
        ticker: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        page_size: Optional[int] = None,
        fields: Sequence[str] = (),
        gaps: bool = False,
        trades: bool = False,
        transport: str = "stream",
    ) -> "RowStream[Union[DeltaRow, Gap, TradeRow]]":
        """Every delta row of a range, in (ts, sequence) order; with ``gaps=True`` gap markers among them, with
        ``trades=True`` (``include=trades``, documented shape) the trades as :class:`TradeRow` values interleaved by
        (ts, sequence)."""
        o = dict(start=start, end=end, page_size=page_size, fields=fields, gaps=gaps, transport=transport)
        return self._range(DELTAS, exchange, ticker, o, ["trades"] if trades else [])

    def trades(
        self,
        exchange: str,
        ticker: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        page_size: Optional[int] = None,
        fields: Sequence[str] = (),
        gaps: bool = False,
        transport: str = "stream",
    ) -> "RowStream[Union[TradeRow, Gap]]":
        """Every trade of a range, in (ts, sequence) order (``GET /api/{exchange}/trades/{ticker}``). ``fields``:
        ``received_ts``, ``venue_side``, ``sequence``."""
        o = dict(start=start, end=end, page_size=page_size, fields=fields, gaps=gaps, transport=transport)
        return self._range(TRADES, exchange, ticker, o, [])

    def bars(
        self,
        exchange: str,
        ticker: str,
        interval: str,
        *,
        start: Optional[Moment] = None,
        end: Optional[Moment] = None,
        page_size: Optional[int] = None,
    ) -> "RowStream[Bar]":
        """OHLCV bars from the recorded trades (``GET /api/{exchange}/bars/{ticker}?interval=``, documented shape: to
        be checked once the service serves it); bars without trades are absent. ``interval``: 1m, 5m, 1h, 1d."""
        if interval not in BAR_INTERVALS:
            raise InvalidArgumentError(f"interval must be one of {', '.join(BAR_INTERVALS)}")
        o = dict(start=start, end=end, page_size=page_size, transport="pages", query={"interval": interval})
        return self._range(BARS, exchange, ticker, o, [])

    # ------------------------------------------------------------------------------------------- rule 7 here

    def rebuild(self, exchange: str, ticker: str, at: Moment, *, lookback: timedelta = timedelta(days=1)) -> OrderBook:
        """The book at ``at`` by rule 7, here: the latest snapshot at or before it (looked for up to ``lookback``
        back) and every delta from its ``ts`` up to ``at`` inclusive — or, when a recorded gap ended after that
        snapshot without one (a gap closed by an empty book), an empty book at the gap's end and the deltas from
        there. The book is settled (cross-checked). :class:`~depthgate.errors.BookError` ``in_gap`` when ``at`` lies
        in a recorded gap, ``no_snapshot`` when there is nothing to start from."""
        history_path(exchange, "book", ticker)
        return rebuild_at(self.http, exchange, ticker, to_ms(moment(at, "at")), _lookback_ms(lookback))

    def replay(
        self,
        exchange: str,
        ticker: str,
        start: Moment,
        end: Optional[Moment] = None,
        *,
        page_size: Optional[int] = None,
        lookback: timedelta = timedelta(days=1),
        on_gap: str = "event",
        verify_snapshots: bool = True,
    ) -> "Iterable[ReplayEvent]":
        """The book after each moment from ``start`` to ``end`` (inclusive; omitted: up to the newest row): starts from
        the latest snapshot at or before ``start`` and applies the deltas in order, yielding a
        :class:`~depthgate.replay.BookEvent` after each ``ts`` from ``start`` on (the same ``OrderBook`` each time:
        ``copy()`` what you keep). Every later snapshot is checked against the replayed book (a difference outside a
        gap is ``snapshot_mismatch``; ``verify_snapshots=False`` reads only the deltas). A recorded gap yields a
        :class:`~depthgate.replay.GapEvent` (or raises ``in_gap`` with ``on_gap="error"``): no book inside it; the
        replay restarts from the snapshot at its end (an empty book when the gap left none), with a
        :class:`~depthgate.replay.SnapshotEvent` saying so."""
        if on_gap not in ("event", "error"):
            raise InvalidArgumentError('on_gap must be "event" or "error"')
        history_path(exchange, "deltas", ticker)
        frm = to_ms(moment(start, "start"))
        to = None if end is None else to_ms(moment(end, "end"))
        lookback_ms = _lookback_ms(lookback)

        def events() -> Any:
            book = starting_book(self.http, exchange, ticker, frm, lookback_ms)
            yield from walk(
                self.http, book, exchange, ticker, frm, to, page_size=page_size, on_gap=on_gap,
                verify_snapshots=verify_snapshots,
            )

        return events()

    def books_at(
        self,
        exchange: str,
        ticker: str,
        moments: Iterable[Moment],
        *,
        page_size: Optional[int] = None,
        lookback: timedelta = timedelta(days=1),
    ) -> List[BookAt]:
        """The book at each of many moments, in one pass: a replay from the first to the last (every recorded snapshot
        on the way checked), cheaper than a ``rebuild`` per moment. One :class:`~depthgate.replay.BookAt` per
        distinct moment, in time order: its ``book`` (an independent copy), or its ``gap`` when the moment lies in
        a recorded gap."""
        history_path(exchange, "deltas", ticker)
        ms = [to_ms(moment(m, "moment")) for m in moments]
        return books_at(self.http, exchange, ticker, ms, _lookback_ms(lookback), page_size)


def _lookback_ms(lookback: timedelta) -> int:
    if not isinstance(lookback, timedelta) or lookback <= timedelta(0):
        raise InvalidArgumentError("lookback must be a positive timedelta")
    return int(lookback / timedelta(milliseconds=1))
