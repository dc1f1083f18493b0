"""The history service's one-object answers — coverage and the book at a moment — as typed values, checked when
parsed (a malformed body is a ``malformed_body`` error, never a wrong result)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

from .checksum import book_checksum
from .decimals import is_decimal_text
from .errors import DataError
from .http import Answer
from .order_book import Level
from .rows import Gap, Where, parse_gap
from .timestamps import parse_timestamp


@dataclass(frozen=True)
class KindCoverage:
    """Rows of one kind inside a coverage window; ``books`` for snapshots only."""

    rows: int
    first_ts: Optional[datetime]
    last_ts: Optional[datetime]
    books: Optional[int] = None


#: How a recorded book was confirmed equal to the venue's: its REST book, a venue checksum, a venue snapshot.
VERIFICATION_METHODS = ("rest_book", "checksum", "snapshot")


@dataclass(frozen=True)
class VerificationCoverage:
    """The moments the recorder confirmed its book equal to the venue's, inside a coverage window: how many, the first
    and the newest (None: none), and how many by each method (``rest_book``, ``checksum``, ``snapshot``)."""

    count: int
    first_ts: Optional[datetime]
    last_ts: Optional[datetime]
    methods: Dict[str, int]


@dataclass(frozen=True)
class BookVerified:
    """The confirmations around a book's moment: the last at or before it (inside the caller's window) and the first
    after it, each with its method; None: none. Both set and no gap between them: the book was confirmed on both
    sides (docs/history.md, "Verified books")."""

    before: Optional[datetime]
    before_method: Optional[str]
    after: Optional[datetime]
    after_method: Optional[str]


@dataclass(frozen=True)
class CallerWindow:
    """The caller's window for a ticker and the rule that sets it: ``anonymous`` (no key: the last day),
    ``max_data_age_days``, ``full_history_prefix`` or ``full_history``; ``days`` None for full history."""

    start_ts: datetime
    rule: str
    days: Optional[int]


@dataclass(frozen=True)
class Coverage:
    """What is recorded for a ticker in a window, and every gap overlapping it: "no rows" (recorded, nothing happened)
    told apart from "not recorded" (a gap)."""

    exchange: str
    ticker: str
    start_ts: datetime
    end_ts: Optional[datetime]
    snapshots: KindCoverage
    deltas: KindCoverage
    gaps: List[Gap]
    window: Optional[CallerWindow]
    #: None from a service older than the field.
    verifications: Optional[VerificationCoverage] = None


@dataclass(frozen=True)
class ServiceBook:
    """The service's book at a moment (rule 7 on the server). ``status``: ``ok``, ``in_gap`` (``gap`` says which; no
    book) or ``no_data`` (nothing to start from)."""

    exchange: str
    ticker: str
    at: datetime
    status: str
    snapshot_ts: Optional[datetime]
    #: The last delta applied: (ts, sequence); None when none since the snapshot.
    last_delta: Optional[Tuple[datetime, int]]
    gap: Optional[Gap]
    base_gap: Optional[Gap]
    bids: Optional[List[Level]]
    asks: Optional[List[Level]]
    #: None from a service older than the field.
    verified: Optional[BookVerified] = None

    def checksum(self, depth: int = 25) -> Optional[int]:
        """The documented checksum of its top ``depth`` levels (None without a book)."""
        if self.bids is None or self.asks is None:
            return None
        return book_checksum(self.bids, self.asks, depth)


def _malformed(answer: Answer, why: str) -> DataError:
    return DataError("malformed_body", why, url=answer.url, request_id=answer.request_id)


def _ts_field(answer: Answer, body: Dict[str, Any], name: str, nullable: bool = False) -> Optional[datetime]:
    v = body.get(name)
    if v is None and nullable:
        return None
    dt = parse_timestamp(v) if isinstance(v, str) else None
    if dt is None:
        raise _malformed(answer, f'"{name}" is not a timestamp')
    return dt


def _kind_coverage(answer: Answer, v: Any, name: str) -> KindCoverage:
    if not isinstance(v, dict) or not isinstance(v.get("rows"), int):
        raise _malformed(answer, f'a coverage answer whose "{name}" has no rows')
    books = v.get("books")
    return KindCoverage(
        v["rows"],
        _ts_field(answer, v, "first_ts", True),
        _ts_field(answer, v, "last_ts", True),
        books if isinstance(books, int) else None,
    )


def _method(answer: Answer, v: Any, name: str) -> Optional[str]:
    if v is None:
        return None
    if v not in VERIFICATION_METHODS:
        raise _malformed(answer, f'"{name}" is none of {", ".join(VERIFICATION_METHODS)}')
    return v  # type: ignore[no-any-return]


def _verifications(answer: Answer, v: Any) -> Optional[VerificationCoverage]:
    if v is None:
        return None
    methods = v.get("methods") if isinstance(v, dict) else None
    if (
        not isinstance(v, dict)
        or not isinstance(v.get("count"), int)
        or not isinstance(methods, dict)
        or not all(isinstance(n, int) and m in VERIFICATION_METHODS for m, n in methods.items())
    ):
        raise _malformed(answer, '"verifications" is not {count, first_ts, last_ts, methods}')
    return VerificationCoverage(
        v["count"], _ts_field(answer, v, "first_ts", True), _ts_field(answer, v, "last_ts", True), dict(methods)
    )


def _verified(answer: Answer, v: Any) -> Optional[BookVerified]:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _malformed(answer, '"verified" is not {before, before_method, after, after_method}')
    return BookVerified(
        _ts_field(answer, v, "before", True),
        _method(answer, v.get("before_method"), "before_method"),
        _ts_field(answer, v, "after", True),
        _method(answer, v.get("after_method"), "after_method"),
    )


def parse_coverage(answer: Answer, body: Dict[str, Any]) -> Coverage:
    if not isinstance(body.get("gaps"), list):
        raise _malformed(answer, 'a coverage answer without "snapshots", "deltas" and "gaps"')
    where = Where(answer.url, answer.request_id)
    gaps = []
    for i, g in enumerate(body["gaps"]):
        where.line = i + 1
        gaps.append(parse_gap(g, where))
    window = body.get("window")
    caller = None
    if isinstance(window, dict):
        start = _ts_field(answer, window, "start_ts")
        assert start is not None
        caller = CallerWindow(start, str(window.get("rule")), window.get("days"))
    start_ts = _ts_field(answer, body, "start_ts")
    assert start_ts is not None
    return Coverage(
        str(body.get("exchange")),
        str(body.get("ticker")),
        start_ts,
        _ts_field(answer, body, "end_ts", True),
        _kind_coverage(answer, body.get("snapshots"), "snapshots"),
        _kind_coverage(answer, body.get("deltas"), "deltas"),
        gaps,
        caller,
        _verifications(answer, body.get("verifications")),
    )


def _levels(answer: Answer, v: Any, side: str) -> List[Level]:
    if not isinstance(v, list):
        raise _malformed(answer, f'a book answer without "{side}"')
    out = []
    for i, level in enumerate(v):
        if not isinstance(level, dict) or not is_decimal_text(level.get("price")) or not is_decimal_text(level.get("quantity")):
            raise _malformed(answer, f"{side}[{i}] is not {{price, quantity}} decimals")
        out.append(Level(Decimal(level["price"]), Decimal(level["quantity"])))
    return out


def parse_book(answer: Answer, body: Dict[str, Any]) -> ServiceBook:
    status = body.get("status")
    if status not in ("ok", "in_gap", "no_data"):
        raise _malformed(answer, f"a book answer with status {status!r}")
    where = Where(answer.url, answer.request_id)
    gap = parse_gap(body["gap"], where) if body.get("gap") is not None else None
    base_gap = parse_gap(body["base_gap"], where) if body.get("base_gap") is not None else None
    if status == "in_gap" and gap is None:
        raise _malformed(answer, "an in_gap answer without its gap")
    last = body.get("last_delta")
    last_delta = None
    if isinstance(last, dict):
        lts = _ts_field(answer, last, "ts")
        seq = last.get("sequence")
        if lts is None or not isinstance(seq, int):
            raise _malformed(answer, '"last_delta" is not {ts, sequence}')
        last_delta = (lts, seq)
    at_ts = _ts_field(answer, body, "at")
    assert at_ts is not None
    return ServiceBook(
        str(body.get("exchange")),
        str(body.get("ticker")),
        at_ts,
        status,
        _ts_field(answer, body, "snapshot_ts", True),
        last_delta,
        gap,
        base_gap,
        _levels(answer, body.get("bids"), "bids") if status == "ok" else None,
        _levels(answer, body.get("asks"), "asks") if status == "ok" else None,
        _verified(answer, body.get("verified")),
    )
