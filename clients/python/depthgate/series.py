"""A range's rows: the NDJSON stream read line by line as it arrives, following its ``next_cursor`` when it stops
early; or JSON pages, following ``next_cursor`` (and, against a service without cursors, ``start_ts``: snapshots by
whole books, deltas skipping the ``sequence`` values already seen at the last ``ts``). Rows are checked as they are
parsed; a cut stream is a ``stream_cut`` error after the rows already given, never a short result. Gap markers
(``include=gaps``) are yielded among the rows as :class:`~depthgate.rows.Gap` values, in time order.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any, Dict, Generic, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar
from urllib.parse import quote

from .errors import DataError, InvalidArgumentError
from .http import Answer, Transport
from .rows import EndLine, Gap, Kind, TradesGap, Where, parse_gap, parse_line, parse_trade
from .timestamps import format_timestamp

T = TypeVar("T")

_EXCHANGE = re.compile(r"[A-Za-z0-9_-]{1,32}")
_NDJSON = re.compile(r"application/(x-)?ndjson")
_JSON = re.compile(r"application/json")
#: Rows per request of the pages transport (the service's MAX_LIMIT is 1,000,000).
DEFAULT_PAGE = 100_000


def history_path(exchange: str, endpoint: str, ticker: Optional[str] = None) -> str:
    """``/api/{exchange}/{endpoint}[/{ticker}]``, the exchange key (or alias) checked and the ticker escaped."""
    if not isinstance(exchange, str) or _EXCHANGE.fullmatch(exchange) is None:
        raise InvalidArgumentError(f"not an exchange key: {exchange!r}")
    if ticker is not None and (not isinstance(ticker, str) or not ticker):
        raise InvalidArgumentError(f"not a ticker: {ticker!r}")
    return f"/api/{exchange}/{endpoint}" + ("" if ticker is None else "/" + quote(ticker, safe=""))


def iso(dt: Optional[datetime]) -> Optional[str]:
    return None if dt is None else format_timestamp(dt)


def parse_json_body(answer: Answer, text: str) -> Dict[str, Any]:
    """A JSON object body, or a ``malformed_body`` (``stream_cut`` when it stops before its closing brace)."""
    try:
        value = json.loads(text)
    except ValueError:
        cut = text.startswith("{") and not text.rstrip().endswith("}")
        raise DataError(
            "stream_cut" if cut else "malformed_body",
            "the JSON body ends early" if cut else "the body is not JSON",
            url=answer.url,
            request_id=answer.request_id,
            text=text[:200],
        ) from None
    if not isinstance(value, dict):
        raise DataError("malformed_body", "the body is not a JSON object", url=answer.url, request_id=answer.request_id)
    return value


class Page(Generic[T]):
    """One JSON page of rows, as the endpoint answers it."""

    __slots__ = ("exchange", "ticker", "rows", "count", "next_cursor", "has_cursor", "gaps")

    def __init__(
        self,
        exchange: str,
        ticker: str,
        rows: List[T],
        count: int,
        next_cursor: Optional[str],
        has_cursor: bool,
        gaps: List[Gap],
    ) -> None:
        self.exchange = exchange
        self.ticker = ticker
        self.rows = rows
        self.count = count
        #: Where the next page starts when ``limit`` cut this one; None when nothing is left.
        self.next_cursor = next_cursor
        #: Whether the answer carried ``next_cursor`` at all (a service without cursors leaves it out).
        self.has_cursor = has_cursor
        #: With ``include=gaps``: the gaps among these rows.
        self.gaps = gaps

    def __repr__(self) -> str:
        return f"<Page {self.exchange} {self.ticker}: {self.count} rows, {len(self.gaps)} gaps, next_cursor={self.next_cursor!r}>"


def check_page(kind: Kind[Any], answer: Answer, text: str) -> Page[Any]:
    """A JSON page, checked: its rows, ``count``, gaps and ``next_cursor``."""
    body = parse_json_body(answer, text)
    where = Where(answer.url, answer.request_id)
    rows = body.get("rows")
    count = body.get("count")
    if not isinstance(rows, list) or not isinstance(count, int):
        raise DataError("malformed_body", 'a rows answer without "rows" and "count"', url=answer.url, request_id=answer.request_id)
    if count != len(rows):
        raise DataError(
            "malformed_body", f'"count" is {count} but {len(rows)} rows came', url=answer.url, request_id=answer.request_id
        )
    parsed = []
    for i, r in enumerate(rows):
        where.line = i + 1
        # Deltas with trades: the trades among the rows, as `{"type":"trade",…}` (the only typed row a page holds).
        parsed.append(parse_trade(r, where) if isinstance(r, dict) and r.get("type") == "trade" else kind.parse(r, where))
    gaps: List[Gap] = []
    # The book's gaps, and (deltas with trades) the trades' gaps, in the order a stream places them.
    for name, cls in (("gaps", Gap), ("trades_gaps", TradesGap)):
        if body.get(name) is None:
            continue
        if not isinstance(body[name], list):
            raise DataError("malformed_body", f'"{name}" is not a list', url=answer.url, request_id=answer.request_id)
        for i, g in enumerate(body[name]):
            where.line = i + 1
            gaps.append(parse_gap(g, where, cls))
    gaps.sort(key=lambda g: g.from_ts)
    cursor = body.get("next_cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise DataError(
            "malformed_body", '"next_cursor" is neither a string nor null', url=answer.url, request_id=answer.request_id
        )
    return Page(
        str(body.get("exchange", "")), str(body.get("ticker", "")), parsed, count, cursor, "next_cursor" in body, gaps
    )


def read_ndjson(kind: Kind[Any], answer: Answer) -> Iterator[Any]:
    """The rows, gap markers and trade lines of one NDJSON answer, as they arrive; returns (as the generator's value)
    the end line's ``next_cursor`` (None: the range is done)."""
    where = Where(answer.url, answer.request_id)
    end: Optional[EndLine] = None
    count = 0
    for line, terminated in answer.lines():
        where.line += 1
        if not terminated:
            raise DataError("stream_cut", "the stream ended inside a line", url=answer.url, request_id=answer.request_id, line=where.line)
        if end is not None:
            raise DataError("malformed_body", "a line after the end line", url=answer.url, line=where.line, text=line)
        if not line:
            continue
        item = parse_line(kind, line, where)
        if isinstance(item, EndLine):
            end = item
            continue
        if not isinstance(item, Gap):
            count += 1
        yield item
    if end is None:
        raise DataError("stream_cut", "the stream ended without its end line", url=answer.url, request_id=answer.request_id, line=where.line)
    if end.count != count:
        raise DataError(
            "stream_cut", f"the end line counts {end.count} rows, the stream had {count}", url=answer.url, line=where.line
        )
    return end.next_cursor


def series(
    http: Transport,
    kind: Kind[Any],
    exchange: str,
    ticker: str,
    *,
    start: Optional[datetime] = None,
    end: Optional[datetime] = None,
    page_size: Optional[int] = None,
    fields: Sequence[str] = (),
    include: Sequence[str] = (),
    transport: str = "stream",
    query: Optional[Mapping[str, Any]] = None,
) -> Iterator[Any]:
    """Every row of a range (and gap markers with ``include=("gaps",)``), in order."""
    if page_size is not None and (not isinstance(page_size, int) or isinstance(page_size, bool) or page_size <= 0):
        raise InvalidArgumentError("page_size must be a positive integer")
    if transport not in ("stream", "pages"):
        raise InvalidArgumentError('transport must be "stream" or "pages"')
    path = history_path(exchange, kind.endpoint, ticker)
    stream = transport == "stream" and kind.streams
    cursor: Optional[str] = None
    # Paging by start_ts (a service without cursors): the moment and key of the last row given.
    seen: Optional[Tuple[datetime, int]] = None
    page_limit = page_size or DEFAULT_PAGE
    # The next request's limit: a stream has none (the whole range, with a cursor when the service stops early).
    limit: Optional[int] = None if stream and page_size is None else page_limit
    while True:
        target = http.path(
            path,
            {
                # A cursor carries the range it walks (the service refuses both).
                "start_ts": iso(start) if cursor is None else None,
                "end_ts": iso(end) if cursor is None else None,
                "limit": limit,
                "cursor": cursor,
                "fields": ",".join(fields) if fields else None,
                "include": ",".join(include) if include else None,
                "format": "ndjson" if stream else "json",
                **(query or {}),
            },
        )
        answer = http.request(target, headers={"Accept": "application/x-ndjson" if stream else "application/json"})
        ctype = answer.content_type
        if _NDJSON.match(ctype):
            cursor = yield from read_ndjson(kind, answer)
            if cursor is None:
                return
            continue
        if not _JSON.match(ctype):
            answer.close()
            raise DataError("malformed_body", f"a rows answer of type {ctype!r}", url=answer.url, request_id=answer.request_id)
        # A service without streams answers a page (of its default size when no limit was asked): its rows are taken,
        # and the range goes on in pages.
        stream = False
        page = check_page(kind, answer, answer.text())
        gaps = list(page.gaps) if "gaps" in include else []
        for row in page.rows:
            while gaps and gaps[0].from_ts < row.ts:
                yield gaps.pop(0)
            if seen is not None and kind.resume_key is not None and kind.resume_key(row) <= seen:
                continue
            yield row
        yield from gaps
        if page.has_cursor:
            # A service with cursors says where to go on (null: nothing left).
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
            limit = page_limit
            continue
        # The spec's paging: a page shorter than asked for is the last (of a size not asked for: an empty one).
        if len(page.rows) < (limit or 1):
            return
        last = page.rows[-1]
        if kind.whole_moments:
            # Pages never cut a book: the next one starts after the last book's ts.
            start = last.ts + timedelta(milliseconds=1)
            limit = page_limit
            continue
        if kind.resume_key is None:
            raise DataError(
                "malformed_body",
                f"a full page of {kind.endpoint} without next_cursor: this service cannot be paged on",
                url=answer.url,
            )
        # The next page starts at the last ts (start_ts is inclusive, to the millisecond), so it holds again every row
        # of that ts given so far — all of them are in this page, which began at or before it: it asks for those and
        # a page more (at least as many again, so that a ts with more rows than a page takes a few requests, not one
        # per page), each requested once.
        run = sum(1 for r in page.rows if r.ts == last.ts)
        limit = run + max(page_limit, run)
        seen = kind.resume_key(last)
        start = last.ts


class RowStream(Iterator[T]):
    """The rows of a range as an iterator (single use), with :meth:`to_list` and :meth:`to_pandas`. Gap markers
    asked for come among the rows as :class:`~depthgate.rows.Gap` values."""

    def __init__(self, source: Iterator[T], columns: Sequence[str] = ()) -> None:
        self._source = source
        #: The row type's fields (the columns of an empty frame).
        self.columns = tuple(columns)

    def __iter__(self) -> "RowStream[T]":
        return self

    def __next__(self) -> T:
        return next(self._source)

    def close(self) -> None:
        """Stops reading (the connection is closed)."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def to_list(self) -> List[T]:
        """Every remaining item."""
        return list(self._source)

    def to_pandas(self, *, decimals: str = "decimal") -> Any:
        """Every remaining item as a ``pandas.DataFrame``: one column per field, timestamps as
        ``datetime64[ns, UTC]``, decimals as :class:`~decimal.Decimal` objects (exact; ``decimals="float"`` for
        float64, ``"str"`` for canonical text). When gap markers or trade lines come among the rows, a ``type``
        column says which each line is (``row``, ``gap``, ``trade``) and their fields have columns of their own."""
        from .frames import rows_frame

        return rows_frame(self._source, decimals, self.columns)

