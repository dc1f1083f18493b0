"""``OrderBook``: one ticker's book, rebuilt from a snapshot and deltas by the spec's rule 7 as the history service
records it (docs/history.md, "The book at a moment"):

- a snapshot at S is the whole book after every delta with ``ts < S``; deltas with ``ts = S`` apply after it;
- each delta adds ``quantity_delta`` to the quantity at (``side``, ``price``); a level whose quantity reaches zero
  is removed; deltas with equal ``ts`` apply in ``sequence`` order;
- the book at a moment T is the latest snapshot at or before T plus every delta with ``ts ≤ T``.

What would make the book wrong is a :class:`~depthgate.errors.BookError`, never a silent repair: a level driven
below zero (``negative_level``), a delta older than the book or out of (ts, sequence) order (``out_of_order``), a
best bid at or above the best ask once every delta of a moment is applied (``crossed_book``). A moment's deltas may
cross the book on the way (a venue's whole-book update is recorded level by level), so the cross check runs when a
moment is complete: when a delta of a later ``ts`` arrives, and in :meth:`OrderBook.settle`.

Prices and quantities are :class:`~decimal.Decimal`; sums go through :data:`~depthgate.decimals.EXACT`, which
raises rather than rounds. The same rules, in the same order, as the TypeScript client's ``OrderBook``.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from datetime import datetime
from decimal import Decimal
from typing import Any, Dict, Iterable, List, NamedTuple, Optional

from .checksum import book_checksum
from .digest import book_digest
from .decimals import EXACT, canonical, normalize, to_decimal
from .errors import BookError, DataError
from .rows import DeltaRow, SnapshotRow
from .timestamps import format_timestamp, from_ms, to_ms

_HALF = Decimal("0.5")


class Level(NamedTuple):
    """A price level: exact price and quantity."""

    price: Decimal
    quantity: Decimal


class Best(NamedTuple):
    """The best level of each side (None when that side is empty)."""

    bid: Optional[Level]
    ask: Optional[Level]


class OrderBook:
    """A book rebuilt by rule 7. Build it with :meth:`from_snapshot` or :meth:`from_rows`, then :meth:`apply` deltas in
    (ts, sequence) order and :meth:`settle` after the last one; or get one from
    :meth:`HistoryClient.rebuild <depthgate.history.HistoryClient.rebuild>`."""

    __slots__ = (
        "exchange",
        "ticker",
        "check_crossed",
        "_bids",
        "_asks",
        "_bid_prices",
        "_ask_prices",
        "_at",
        "_snapshot_at",
        "_last_seq",
        "_open",
        "_last_ts",
    )

    def __init__(self, *, exchange: Optional[str] = None, ticker: Optional[str] = None, check_crossed: bool = True):
        #: Named in errors.
        self.exchange = exchange
        self.ticker = ticker
        #: Check for a crossed book when a moment is complete.
        self.check_crossed = check_crossed
        self._bids: Dict[Decimal, Decimal] = {}
        self._asks: Dict[Decimal, Decimal] = {}
        # Both ascending: the best bid is the last, the best ask the first.
        self._bid_prices: List[Decimal] = []
        self._ask_prices: List[Decimal] = []
        #: Epoch ms the book stands at (None before a snapshot).
        self._at: Optional[int] = None
        self._snapshot_at: Optional[int] = None
        self._last_seq = -1
        #: A moment is open: deltas of ``_at`` were applied and its cross check is still due.
        self._open = False
        #: The last delta's ``ts`` object: rows that share a ts share the object, which skips the conversion.
        self._last_ts: Optional[datetime] = None

    # ----------------------------------------------------------------------------------------------- building

    @classmethod
    def from_snapshot(cls, rows: Iterable[SnapshotRow], **options: Any) -> "OrderBook":
        """A book from the rows of one snapshot (all with one ``ts``)."""
        book = cls(**options)
        book.load_snapshot(rows)
        return book

    @classmethod
    def from_rows(cls, snapshot: Iterable[SnapshotRow], deltas: Iterable[DeltaRow], **options: Any) -> "OrderBook":
        """Rule 7 from rows at hand: the snapshot's rows, then the deltas sorted here by (``ts``, ``sequence``) (deltas
        before the snapshot's ``ts`` are ``out_of_order``). The book is settled (cross-checked) at the end."""
        book = cls.from_snapshot(snapshot, **options)
        for d in sorted(deltas, key=lambda d: (d.ts, d.sequence)):
            book.apply(d)
        book.settle()
        return book

    def load_snapshot(self, rows: Iterable[SnapshotRow], ts: Optional[datetime] = None) -> None:
        """Replaces the book with a snapshot: the rows of one book, all with the same ``ts``. A snapshot with no rows is
        an empty book at no moment; give ``ts`` to place it (the service writes no rows for an empty book)."""
        bids: Dict[Decimal, Decimal] = {}
        asks: Dict[Decimal, Decimal] = {}
        first: Optional[datetime] = None
        at = None if ts is None else to_ms(ts)
        for row in rows:
            if first is None:
                first = row.ts
                at = to_ms(row.ts)
            elif row.ts != first:
                raise BookError(
                    "out_of_order",
                    f"snapshot rows of two moments ({format_timestamp(first)} and {format_timestamp(row.ts)}) "
                    "given as one book",
                    **self._where(row.ts),
                )
            side = self._side_map(row.side, row, bids, asks)
            q = to_decimal(row.quantity)
            price = normalize(to_decimal(row.price))
            if q < 0:
                raise BookError(
                    "negative_level",
                    f"snapshot level with quantity {canonical(q)}",
                    side=row.side,
                    price=price,
                    **self._where(row.ts),
                )
            if price in side:
                raise BookError("out_of_order", "snapshot lists a price twice", side=row.side, price=price, **self._where(row.ts))
            if q > 0:
                side[price] = q
        self._bids, self._asks = bids, asks
        self._bid_prices = sorted(bids)
        self._ask_prices = sorted(asks)
        self._at = at
        self._snapshot_at = at
        self._last_seq = -1
        self._last_ts = None
        self._open = True
        self.settle()

    def apply(self, delta: DeltaRow) -> None:
        """Applies one delta. Deltas must come in (ts, sequence) order and not before the snapshot; a delta of a later
        ``ts`` first settles the moment before it (cross check). Everything is checked before anything changes: a
        refused delta leaves the book as it was."""
        ts = self._at if delta.ts is self._last_ts else to_ms(delta.ts)
        assert ts is not None
        self._apply_at(delta, ts)

    def _apply_at(self, delta: DeltaRow, ts: int) -> None:
        if self._snapshot_at is None:
            raise BookError("no_snapshot", "a delta applied before any snapshot", **self._delta_where(delta))
        later = ts != self._at
        if later and self._at is not None and ts < self._at:
            raise BookError(
                "out_of_order",
                f"delta at {format_timestamp(delta.ts)} is older than the book ({format_timestamp(from_ms(self._at))})",
                **self._delta_where(delta),
            )
        if not later and delta.sequence <= self._last_seq:
            raise BookError(
                "out_of_order",
                f"sequence {delta.sequence} after {self._last_seq} at the same ts",
                **self._delta_where(delta),
            )
        if delta.side == "bid":
            side, prices = self._bids, self._bid_prices
        elif delta.side == "ask":
            side, prices = self._asks, self._ask_prices
        else:
            raise DataError("malformed_row", 'side is neither "bid" nor "ask"', text=repr(delta))
        change = delta.quantity_delta
        if not isinstance(change, Decimal):
            change = to_decimal(change)
        price = delta.price if isinstance(delta.price, Decimal) else to_decimal(delta.price)
        old = side.get(price)
        q = change if old is None else EXACT.add(old, change)
        if q < 0:
            raise BookError(
                "negative_level",
                f"delta {canonical(change)} takes the level from {canonical(old)} to {canonical(q)}"
                if old is not None
                else f"delta {canonical(change)} at a price with no level",
                **self._delta_where(delta),
            )
        if later:
            if self._open:
                self.settle()
            self._at = ts
        self._last_ts = delta.ts
        self._last_seq = delta.sequence
        self._open = True
        if old is None:
            if q > 0:
                key = normalize(price)
                side[key] = q
                insort(prices, key)
        elif q > 0:
            side[price] = q
        else:
            del side[price]
            del prices[bisect_left(prices, price)]

    def apply_all(self, deltas: Iterable[DeltaRow]) -> None:
        """Applies deltas in order (see :meth:`apply`)."""
        for d in deltas:
            self.apply(d)

    def settle(self) -> None:
        """Ends the current moment: checks that the book is not crossed (best bid ≥ best ask is ``crossed_book``).
        :meth:`apply` calls it when a later moment starts; call it after the last delta you apply."""
        self._open = False
        if not self.check_crossed or not self._bid_prices or not self._ask_prices:
            return
        bid, ask = self._bid_prices[-1], self._ask_prices[0]
        if bid >= ask:
            raise BookError(
                "crossed_book",
                f"best bid {canonical(bid)} is at or above best ask {canonical(ask)}",
                **self._where(None if self._at is None else from_ms(self._at)),
            )

    # ------------------------------------------------------------------------------------------------- reading

    def bids(self, n: Optional[int] = None) -> List[Level]:
        """Bids, best (highest) first; the top ``n`` when given."""
        prices = self._bid_prices
        count = len(prices) if n is None else max(0, min(n, len(prices)))
        side = self._bids
        return [Level(p, normalize(side[p])) for p in reversed(prices[len(prices) - count :])]

    def asks(self, n: Optional[int] = None) -> List[Level]:
        """Asks, best (lowest) first; the top ``n`` when given."""
        prices = self._ask_prices if n is None else self._ask_prices[: max(0, n)]
        side = self._asks
        return [Level(p, normalize(side[p])) for p in prices]

    def best(self) -> Best:
        """The best bid and ask (None for an empty side)."""
        b, a = self.bids(1), self.asks(1)
        return Best(b[0] if b else None, a[0] if a else None)

    def spread(self) -> Optional[Decimal]:
        """Best ask − best bid, exactly; None when a side is empty."""
        if not self._bid_prices or not self._ask_prices:
            return None
        return normalize(EXACT.subtract(self._ask_prices[0], self._bid_prices[-1]))

    def mid(self) -> Optional[Decimal]:
        """(Best bid + best ask) / 2, exactly; None when a side is empty."""
        if not self._bid_prices or not self._ask_prices:
            return None
        return normalize(EXACT.multiply(EXACT.add(self._ask_prices[0], self._bid_prices[-1]), _HALF))

    def quantity_at(self, side: str, price: Any) -> Optional[Decimal]:
        """The quantity at a price (a Decimal or decimal text), or None when there is no level."""
        q = (self._bids if side == "bid" else self._asks).get(to_decimal(price))
        return None if q is None else normalize(q)

    def checksum(self, depth: int = 25) -> int:
        """The documented checksum of the top ``depth`` levels (:mod:`depthgate.checksum`), the TypeScript client's."""
        return book_checksum(self.bids(depth), self.asks(depth), depth)

    def digest(self) -> str:
        """The book digest (:mod:`depthgate.digest`): Σ quantity · weight over the levels modulo 2**61 − 1, as decimal
        text — what the history service's ``format=digest`` gives for each recorded book, and the TypeScript client's
        ``OrderBook.digest()``."""
        return book_digest(
            [("bid", p, q) for p, q in self._bids.items()] + [("ask", p, q) for p, q in self._asks.items()]
        )

    @property
    def ts(self) -> Optional[datetime]:
        """The moment the book stands at: the last applied delta's ``ts``, else the snapshot's; None before one."""
        return None if self._at is None else from_ms(self._at)

    @property
    def snapshot_ts(self) -> Optional[datetime]:
        """The moment of the snapshot the book was built from (or restarted empty at)."""
        return None if self._snapshot_at is None else from_ms(self._snapshot_at)

    @property
    def last_sequence(self) -> Optional[int]:
        """``sequence`` of the last delta applied at ``ts`` (None when none since the moment began)."""
        return None if self._last_seq < 0 else self._last_seq

    def equals_snapshot(self, rows: Iterable[SnapshotRow]) -> bool:
        """Whether the rows of a snapshot hold exactly this book's levels, by value (what ``replay`` checks at every
        recorded snapshot)."""
        seen = set()
        for row in rows:
            q = to_decimal(row.quantity)
            if not q:
                continue
            side = self._bids if row.side == "bid" else self._asks if row.side == "ask" else None
            if side is None:
                return False
            price = to_decimal(row.price)
            if side.get(price) != q or (row.side, price) in seen:
                return False
            seen.add((row.side, price))
        return len(seen) == len(self._bids) + len(self._asks)

    def _pass_snapshot(self, ts: int) -> None:
        """``replay``: the book equals the snapshot recorded at ``ts`` (checked with :meth:`equals_snapshot`), which it
        now stands at, as if loaded from it."""
        self.settle()
        self._at = ts
        self._snapshot_at = ts
        self._last_seq = -1
        self._last_ts = None

    def equals(self, other: "OrderBook") -> bool:
        """Same levels with the same quantities (by value)."""
        return self._bids == other._bids and self._asks == other._asks

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderBook) and self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> "OrderBook":
        """An independent copy."""
        c = OrderBook(exchange=self.exchange, ticker=self.ticker, check_crossed=self.check_crossed)
        c._bids, c._asks = dict(self._bids), dict(self._asks)
        c._bid_prices, c._ask_prices = list(self._bid_prices), list(self._ask_prices)
        c._at, c._snapshot_at, c._last_seq = self._at, self._snapshot_at, self._last_seq
        c._open, c._last_ts = self._open, self._last_ts
        return c

    def to_dict(self, depth: Optional[int] = None) -> Dict[str, Any]:
        """The book as JSON-ready data: moments as RFC 3339 text and levels as canonical decimal text."""
        return {
            "exchange": self.exchange,
            "ticker": self.ticker,
            "ts": None if self._at is None else format_timestamp(from_ms(self._at)),
            "snapshot_ts": None if self._snapshot_at is None else format_timestamp(from_ms(self._snapshot_at)),
            "last_sequence": self.last_sequence,
            "bids": [{"price": canonical(p), "quantity": canonical(q)} for p, q in self.bids(depth)],
            "asks": [{"price": canonical(p), "quantity": canonical(q)} for p, q in self.asks(depth)],
        }

    def to_pandas(self, depth: Optional[int] = None, *, decimals: str = "decimal") -> Any:
        """The levels as a ``pandas.DataFrame``: ``side``, ``level`` (1 = best), ``price``, ``quantity`` (Decimals;
        ``decimals="float"`` for floats). Needs pandas."""
        from .frames import levels_frame

        return levels_frame(self.bids(depth), self.asks(depth), decimals)

    def __repr__(self) -> str:
        best = self.best()
        fmt = lambda l: "-" if l is None else f"{canonical(l.quantity)}@{canonical(l.price)}"  # noqa: E731
        at = "no moment" if self._at is None else format_timestamp(from_ms(self._at))
        return (
            f"<OrderBook {self.exchange or ''} {self.ticker or ''} at {at}: {len(self._bids)} bids, "
            f"{len(self._asks)} asks, best {fmt(best.bid)} / {fmt(best.ask)}>"
        )

    # -------------------------------------------------------------------------------------------------- helpers

    def _side_map(self, side: str, row: Any, bids: Dict[Decimal, Decimal], asks: Dict[Decimal, Decimal]) -> Dict[Decimal, Decimal]:
        if side == "bid":
            return bids
        if side == "ask":
            return asks
        raise DataError("malformed_row", 'side is neither "bid" nor "ask"', text=repr(row))

    def _where(self, ts: Optional[datetime]) -> Dict[str, Any]:
        return {"exchange": self.exchange, "ticker": self.ticker, "ts": ts}

    def _delta_where(self, delta: DeltaRow) -> Dict[str, Any]:
        return {**self._where(delta.ts), "sequence": delta.sequence, "side": delta.side, "price": delta.price}
