"""Rule 7 on this side (docs/history.md), for ``HistoryClient.rebuild``, ``replay`` and ``books_at``: the book from
the latest snapshot at or before a moment (:func:`starting_book`), then every delta, later snapshot and recorded gap
of the range in time order (:func:`walk`, over the row streams of :mod:`depthgate.series`; gaps from the coverage
endpoint). Gaps are reported, never papered over; a replayed book that differs from a recorded snapshot is an
error. The same walk, in the same order, as the TypeScript client's ``history-replay.ts``.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from .answers import parse_coverage
from .errors import BookError, HttpError
from .http import Transport
from .order_book import OrderBook
from .rows import DELTAS, DIGESTS, SNAPSHOTS, DeltaRow, DigestLine, Gap, SnapshotRow
from .series import _NDJSON, history_path, iso, parse_json_body, read_ndjson, series
from .timestamps import format_timestamp, from_ms, to_ms

_INF = float("inf")


class BookEvent(NamedTuple):
    """The book after every delta with this ``ts`` (the same :class:`OrderBook` each time: ``copy()`` what you keep)."""

    ts: datetime
    book: OrderBook
    type = "book"


class SnapshotEvent(NamedTuple):
    """A snapshot inside the range: the replayed book was checked against it (or restarted from it after a gap)."""

    ts: datetime
    book: OrderBook
    restarted: bool
    type = "snapshot"


class GapEvent(NamedTuple):
    """A recorded gap: no book is given for ``[from_ts, to_ts)``; the replay resumes from the next snapshot."""

    gap: Gap
    type = "gap"


class _Advance(NamedTuple):
    """Internal: the walk is about to move to ``ts`` (epoch ms); the book holds everything before it."""

    ts: float


ReplayEvent = Union[BookEvent, SnapshotEvent, GapEvent]


class BookAt(NamedTuple):
    """The book at a moment (``books_at``): ``book`` (an independent copy), or ``gap`` when the moment lies in a
    recorded gap (then ``book`` is None)."""

    at: datetime
    book: Optional[OrderBook]
    gap: Optional[Gap]


def gaps_in(http: Transport, exchange: str, ticker: str, start: int, end: Optional[int]) -> List[Gap]:
    """The gaps overlapping [start, end] from the coverage endpoint; none when the service has none (404
    ``not_found``)."""
    target = http.path(
        history_path(exchange, "coverage", ticker),
        {"start_ts": iso(from_ms(start)), "end_ts": None if end is None else iso(from_ms(end))},
    )
    try:
        answer = http.request(target, headers={"Accept": "application/json"})
    except HttpError as err:
        if err.code == "not_found":
            return []
        raise
    return parse_coverage(answer, parse_json_body(answer, answer.text())).gaps


def books_in(
    http: Transport, exchange: str, ticker: str, start: int, end: Optional[int], page_size: Optional[int] = None
) -> Iterator[Tuple[int, List[SnapshotRow]]]:
    """Snapshot rows grouped into books (epoch ms, rows), one per ``ts``."""
    rows: List[SnapshotRow] = []
    current: Optional[datetime] = None
    for row in series(
        http,
        SNAPSHOTS,
        exchange,
        ticker,
        start=from_ms(start),
        end=None if end is None else from_ms(end),
        page_size=page_size,
    ):
        if row.ts != current:
            if rows:
                yield to_ms(rows[0].ts), rows
            rows = []
            current = row.ts
        rows.append(row)
    if rows:
        yield to_ms(rows[0].ts), rows


#: A later snapshot as the replay checks it: its digest line, or (a service without digests) its rows.
Recorded = Union[DigestLine, List[SnapshotRow]]


def recorded_snapshots(
    http: Transport, exchange: str, ticker: str, start: int, end: Optional[int], page_size: Optional[int] = None
) -> Iterator[Tuple[int, Recorded]]:
    """The snapshots of a range as the replay checks them, one per book (epoch ms, …): their digests
    (``format=digest``: one line per book), or — from a service that refuses the format (one from before it) or
    answers JSON only — their rows (:func:`books_in`)."""
    path = history_path(exchange, SNAPSHOTS.endpoint, ticker)
    cursor: Optional[str] = None
    #: Where the books not yet given begin (pages end on whole books): where the rows take over after a refusal.
    rest = start
    while True:
        target = http.path(
            path,
            {
                "start_ts": iso(from_ms(start)) if cursor is None else None,
                "end_ts": iso(None if end is None else from_ms(end)) if cursor is None else None,
                "limit": page_size,
                "cursor": cursor,
                "format": "digest",
            },
        )
        try:
            answer = http.request(target, headers={"Accept": "application/x-ndjson"})
        except HttpError as err:
            # A service without digests (also a replica of an older version answering a later page, mid-deploy).
            if err.status == 400 and err.code == "invalid_format":
                yield from books_in(http, exchange, ticker, rest, end, page_size)
                return
            raise
        if not _NDJSON.match(answer.content_type):
            # A service that answers JSON pages only.
            answer.close()
            yield from books_in(http, exchange, ticker, rest, end, page_size)
            return
        lines = read_ndjson(DIGESTS, answer)
        while True:
            try:
                line = next(lines)
            except StopIteration as done:
                cursor = done.value
                break
            rest = to_ms(line.ts) + 1
            yield rest - 1, line
        if cursor is None:
            return


def _matches(book: OrderBook, recorded: Recorded) -> bool:
    """Whether the replayed book equals a recorded one: the same number of levels and the same digest, or (rows) the
    same levels by value."""
    if isinstance(recorded, DigestLine):
        return len(book._bids) + len(book._asks) == recorded.levels and book.digest() == recorded.digest
    return book.equals_snapshot(recorded)


def starting_book(http: Transport, exchange: str, ticker: str, at: int, lookback_ms: int) -> OrderBook:
    """The latest snapshot at or before ``at`` as a book, looked for in windows growing backwards from ``at``; else,
    when a recorded gap ended in the lookback (closed by an empty book, which writes no rows), an empty book at its
    end; else ``no_snapshot``."""
    span = 15 * 60_000
    while True:
        w = min(span, lookback_ms)
        last: Optional[List[SnapshotRow]] = None
        for _, rows in books_in(http, exchange, ticker, at - w, at):
            last = rows
        if last is not None:
            return OrderBook.from_snapshot(last, exchange=exchange, ticker=ticker)
        if w >= lookback_ms:
            ended = [to_ms(g.to_ts) for g in gaps_in(http, exchange, ticker, at - w, at)]
            ended = [t for t in ended if t <= at]
            if ended:
                book = OrderBook(exchange=exchange, ticker=ticker)
                book.load_snapshot([], from_ms(max(ended)))
                return book
            raise BookError(
                "no_snapshot",
                f"no snapshot within {lookback_ms} ms before {format_timestamp(from_ms(at))}",
                exchange=exchange,
                ticker=ticker,
                ts=from_ms(at),
            )
        span *= 4


class _Deltas:
    """The deltas of a range, one at hand (``row``, and its ``ts`` in epoch ms; inf once they are done)."""

    def __init__(self, source: Iterator[DeltaRow]) -> None:
        self._source = source
        self.row: Optional[DeltaRow] = None
        self.ts: float = _INF
        self._last_dt: Optional[datetime] = None
        self._last_ms = 0
        self.advance()

    def advance(self) -> None:
        row = next(self._source, None)
        self.row = row
        if row is None:
            self.ts = _INF
            return
        # Rows that share a ts share its datetime object (the parser remembers the last text).
        if row.ts is not self._last_dt:
            self._last_dt = row.ts
            self._last_ms = to_ms(row.ts)
        self.ts = self._last_ms


def _close(source: Iterator[Any]) -> None:
    """Closes a generator (its open answer with it); other iterators hold nothing. One still running on a thread (an
    interrupt while the pool waited) is left to the garbage collector."""
    close = getattr(source, "close", None)
    if close is not None and not getattr(source, "gi_running", False):
        close()


def walk(
    http: Transport,
    book: OrderBook,
    exchange: str,
    ticker: str,
    frm: int,
    to: Optional[int],
    *,
    page_size: Optional[int] = None,
    on_gap: str = "event",
    verify_snapshots: bool = True,
    advance: bool = False,
) -> Iterator[Union[ReplayEvent, _Advance]]:
    """The one replay loop: from ``book`` (at its snapshot) through every delta, later snapshot and gap up to ``to``,
    in time order; at equal ``ts`` a gap's start comes first, then a snapshot (the book after every delta before it),
    then a restart at a gap's end, then the deltas. Yields book events for moments ≥ ``frm``, snapshots ≥ ``frm``,
    and gaps that end after ``frm``; with ``advance``, also an internal event each time the walk moves to a later
    moment (the book then holds everything before it)."""
    begin = book._at
    assert begin is not None
    end = None if to is None else from_ms(to)
    source = series(http, DELTAS, exchange, ticker, start=from_ms(begin), end=end, page_size=page_size)
    # Later snapshots (a range of one moment has none: the service refuses start_ts after end_ts): their digests, or
    # their rows from a service without digests.
    no_books = (to is not None and begin + 1 > to) or not verify_snapshots
    books: Iterator[Tuple[int, Recorded]] = (
        iter(()) if no_books else recorded_snapshots(http, exchange, ticker, begin + 1, to, page_size)
    )
    try:
        # The three reads from the book's moment go out together (one round trip, not three): the range's gaps and the
        # first later snapshot on two threads (the transport is thread-safe), the first deltas here. Every one is over
        # before a failure among them is raised (the first in that order), so none is left running; an interrupt
        # (KeyboardInterrupt, SystemExit) is not held back, and the pool's exit waits for the threads.
        failed: Optional[Exception] = None
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="depthgate-replay") as pool:
            # Each on a copy of the caller's context, as if called here (a tracer's current span, a log's request id).
            found_gaps = pool.submit(contextvars.copy_context().run, gaps_in, http, exchange, ticker, begin, to)
            first_book = pool.submit(contextvars.copy_context().run, next, books, None)
            try:
                deltas = _Deltas(source)
            except Exception as err:  # raised below, once the threads are done
                failed = err
        error = found_gaps.exception() or failed or first_book.exception()
        if error is not None:
            raise error
        gaps = sorted(
            (
                (to_ms(g.from_ts), to_ms(g.to_ts), g)
                for g in found_gaps.result()
                if to_ms(g.to_ts) > begin and (to is None or to_ms(g.from_ts) <= to)
            ),
            key=lambda x: x[0],
        )
        next_book = first_book.result()
        gap_index = 0
        #: Inside a gap until this moment (-inf: not in one).
        skip_until: float = -_INF
        pending: Optional[int] = None
        moved_to: float = -_INF
        while True:
            delta_ts = deltas.ts
            book_ts = _INF if next_book is None else next_book[0]
            gap = gaps[gap_index] if gap_index < len(gaps) else None
            gap_ts = _INF if gap is None else gap[0]
            restart_ts = _INF if skip_until == -_INF or (to is not None and skip_until > to) else skip_until
            nxt = min(delta_ts, book_ts, gap_ts, restart_ts)
            # A moment is complete when the next event is later: the book after it.
            if pending is not None and nxt > pending:
                book.settle()
                if pending >= frm:
                    yield BookEvent(from_ms(pending), book)
                pending = None
            if advance and nxt > moved_to:
                moved_to = nxt
                yield _Advance(nxt)
            if nxt == _INF:
                break
            if gap is not None and gap_ts == nxt:
                gap_index += 1
                skip_until = max(skip_until, gap[1])
                if gap[1] > frm:
                    if on_gap == "error":
                        g = gap[2]
                        raise BookError(
                            "in_gap",
                            f"the series has a recorded gap ({g.reason}, {iso(g.from_ts)} – {iso(g.to_ts)})",
                            exchange=exchange,
                            ticker=ticker,
                            ts=g.from_ts,
                        )
                    yield GapEvent(gap[2])
                continue
            if next_book is not None and book_ts == nxt:
                bts, recorded = next_book
                next_book = next(books, None)
                if bts < skip_until:
                    continue  # inside a gap: the gap's end decides where the book restarts
                restarted = skip_until != -_INF
                if restarted:
                    # From a digest, the book's rows are read here, and must be that book.
                    book.load_snapshot(
                        _rows_at(http, exchange, ticker, bts) if isinstance(recorded, DigestLine) else recorded,
                        from_ms(bts),
                    )
                    if not _matches(book, recorded):
                        raise BookError(
                            "snapshot_mismatch",
                            "the rows read for the recorded book a gap restarts from differ from its digest",
                            exchange=exchange,
                            ticker=ticker,
                            ts=from_ms(bts),
                        )
                elif _matches(book, recorded):
                    # A snapshot at S is the book after every delta with ts < S: it equals the replayed book.
                    book._pass_snapshot(bts)
                else:
                    raise BookError(
                        "snapshot_mismatch",
                        "the replayed book differs from the recorded snapshot of the same moment, outside any "
                        "recorded gap",
                        exchange=exchange,
                        ticker=ticker,
                        ts=from_ms(bts),
                    )
                skip_until = -_INF
                if bts >= frm:
                    yield SnapshotEvent(from_ms(bts), book, restarted)
                continue
            if restart_ts == nxt:
                # The gap ended without a snapshot (the book was empty then): it restarts empty. Without the
                # snapshots' stream, the snapshot at the gap's end (if any) is read here.
                at = int(restart_ts)
                book.load_snapshot([] if verify_snapshots else _rows_at(http, exchange, ticker, at), from_ms(at))
                skip_until = -_INF
                if at >= frm:
                    yield SnapshotEvent(from_ms(at), book, True)
                continue
            if delta_ts >= skip_until:
                assert deltas.row is not None
                book._apply_at(deltas.row, int(delta_ts))
                pending = int(delta_ts)
            deltas.advance()
    finally:
        _close(source)
        _close(books)


def _rows_at(http: Transport, exchange: str, ticker: str, at: int) -> List[SnapshotRow]:
    """The rows of the snapshot recorded at ``at`` (none: no book was recorded then)."""
    rows: List[SnapshotRow] = []
    for _, found in books_in(http, exchange, ticker, at, at):
        rows = found
    return rows


def rebuild_at(http: Transport, exchange: str, ticker: str, at: int, lookback_ms: int) -> OrderBook:
    """``HistoryClient.rebuild``: the book at ``at`` from the latest snapshot at or before it (or a gap's end), walked
    up to ``at``; ``in_gap`` when ``at`` lies in a recorded gap."""
    book = starting_book(http, exchange, ticker, at, lookback_ms)
    open_gap: Optional[Gap] = None
    for event in walk(http, book, exchange, ticker, at, at):
        if isinstance(event, GapEvent):
            open_gap = event.gap
        elif isinstance(event, SnapshotEvent) and event.restarted:
            open_gap = None
    if open_gap is not None and at < to_ms(open_gap.to_ts):
        raise BookError(
            "in_gap",
            f"{format_timestamp(from_ms(at))} lies in a recorded gap ({open_gap.reason}, "
            f"{iso(open_gap.from_ts)} – {iso(open_gap.to_ts)})",
            exchange=exchange,
            ticker=ticker,
            ts=from_ms(at),
        )
    return book


def books_at(
    http: Transport,
    exchange: str,
    ticker: str,
    moments: Sequence[int],
    lookback_ms: int,
    page_size: Optional[int] = None,
) -> List[BookAt]:
    """The book at each moment (sorted, distinct), in one walk from the first to the last: the state the walk holds
    when it moves past each moment. Every recorded snapshot on the way is checked against the replayed book."""
    ms = sorted(set(moments))
    out: List[BookAt] = []
    if not ms:
        return out
    book = starting_book(http, exchange, ticker, ms[0], lookback_ms)
    open_gap: Optional[Gap] = None
    i = 0

    def emit(until: float) -> None:
        nonlocal i
        while i < len(ms) and ms[i] < until:
            at = from_ms(ms[i])
            out.append(BookAt(at, None, open_gap) if open_gap is not None else BookAt(at, book.copy(), None))
            i += 1

    event: Any
    for event in walk(http, book, exchange, ticker, ms[0], ms[-1], page_size=page_size, advance=True):
        if isinstance(event, _Advance):
            emit(event.ts)
        elif isinstance(event, GapEvent):
            open_gap = event.gap
        elif isinstance(event, SnapshotEvent) and event.restarted:
            open_gap = None
    emit(_INF)
    return out
