"""A worked backtest: a market maker quoting around the microprice of a recorded book, replayed from the history
service with the Python client; prints its fills, inventory and P&L. Runnable against ``./dev up --sim``:

    set -a; eval "$(./dev env)"; set +a
    python3 clients/python/examples/backtest.py [--exchange venue_b] [--ticker T] [--minutes 10] [--fills book]

The strategy (deliberately simple, every rule stated):

- **Quotes.** After each moment of the book, one bid and one ask of ``--size`` around the microprice
  ``(bid × ask_qty + ask × bid_qty) / (bid_qty + ask_qty)`` of the best levels, ``--half-spread`` away, shifted
  against the inventory by ``--skew`` per unit held, rounded away from the microprice to the ``--tick`` grid, never
  crossing the book (a bid at most one tick under the best ask, an ask at least one tick over the best bid). No bid
  while long ``--max-inventory`` or more, no ask while that short. A quote whose price does not change keeps its
  place; one whose price changes is cancelled and placed again (at the back of the queue). No fees, no latency: a
  quote rests from the moment of the book it was computed from.
- **Fills, ``--fills book``** (the default, from the book alone): a resting bid fills in full when the best ask comes
  down to its price or below — a seller then offered at or under a bid that was resting first, so it would have
  traded with it — and a resting ask when the best bid comes up to its price or above. Others joining our price on
  our side is not a fill; the queue does not matter (the other side reached our price, so it went through all of
  it). This is optimistic where the venue's matching was partial; ``--fills trades`` is the stricter rule.
- **Fills, ``--fills trades``** (from recorded trades; follows the documented shape of the trades API, which the
  history service is about to serve): a quote joins the back of its price level — the quantity displayed there when
  it was placed is ahead of it. A taker trade against our side at our price first consumes what is ahead, and the
  rest fills us (up to our size); a trade at a better price than ours (through us) fills us in full. Quantity
  cancelled at our level is assumed to have been behind us (the pessimistic reading).
- **P&L**: cash from the fills plus the inventory marked at the last mid.

The same steps, one at a time with pandas, are the walkthrough in clients/python/README.md ("A worked backtest").
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from pathlib import Path
from typing import Iterator, List, NamedTuple, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from depthgate import HistoryClient, OrderBook, TradeRow, canonical  # noqa: E402
from depthgate.replay import BookEvent, GapEvent, SnapshotEvent  # noqa: E402

#: Model arithmetic (the microprice divides): 34 digits, far beyond any tick.
MODEL = Context(prec=34)


def microprice(book: OrderBook) -> Optional[Decimal]:
    """The best levels' microprice, or None when a side is empty."""
    bid, ask = book.best()
    if bid is None or ask is None:
        return None
    num = MODEL.add(MODEL.multiply(bid.price, ask.quantity), MODEL.multiply(ask.price, bid.quantity))
    return MODEL.divide(num, MODEL.add(bid.quantity, ask.quantity))


@dataclass(frozen=True)
class Params:
    size: Decimal = Decimal(10)
    half_spread: Decimal = Decimal("0.01")
    tick: Decimal = Decimal("0.01")
    skew: Decimal = Decimal("0.0005")
    max_inventory: Decimal = Decimal(50)


class Quote(NamedTuple):
    side: str  # "bid" | "ask"
    price: Decimal
    size: Decimal
    placed: datetime
    #: The quantity displayed at our price when the quote was placed: the queue ahead of it.
    ahead: Decimal


class Fill(NamedTuple):
    ts: datetime
    side: str  # ours: "buy" (our bid filled) | "sell"
    price: Decimal
    size: Decimal
    inventory: Decimal
    rule: str


@dataclass
class MarketMaker:
    params: Params = field(default_factory=Params)
    inventory: Decimal = Decimal(0)
    cash: Decimal = Decimal(0)
    bid: Optional[Quote] = None
    ask: Optional[Quote] = None
    fills: List[Fill] = field(default_factory=list)
    last_mid: Optional[Decimal] = None
    books: int = 0
    requotes: int = 0

    def fill(self, quote: Quote, ts: datetime, size: Decimal, rule: str) -> None:
        """Our quote traded ``size`` at its price."""
        if quote.side == "bid":
            self.inventory += size
            self.cash -= size * quote.price
        else:
            self.inventory -= size
            self.cash += size * quote.price
        self.fills.append(Fill(ts, "buy" if quote.side == "bid" else "sell", quote.price, size, self.inventory, rule))
        rest = quote.size - size
        remaining = quote._replace(size=rest, ahead=Decimal(0)) if rest > 0 else None
        if quote.side == "bid":
            self.bid = remaining
        else:
            self.ask = remaining

    def fills_from_book(self, ts: datetime, book: OrderBook) -> None:
        """``--fills book``: a resting quote fills in full when the other side's best price reaches it."""
        best = book.best()
        if self.bid is not None and best.ask is not None and best.ask.price <= self.bid.price:
            self.fill(self.bid, ts, self.bid.size, "the other side reached our price")
        if self.ask is not None and best.bid is not None and best.bid.price >= self.ask.price:
            self.fill(self.ask, ts, self.ask.size, "the other side reached our price")

    def fills_from_trade(self, trade: TradeRow) -> None:
        """``--fills trades``: a taker sell fills our bid (a taker buy our ask) after the queue ahead of us, or in full
        when it trades through our price."""
        quote = self.bid if trade.side == "sell" else self.ask
        if quote is None or trade.ts <= quote.placed:
            return
        better = trade.price < quote.price if quote.side == "bid" else trade.price > quote.price
        if better:
            self.fill(quote, trade.ts, quote.size, "trade through our price")
            return
        if trade.price != quote.price:
            return
        left = trade.size - quote.ahead
        if left <= 0:
            # The trade only took (part of) the queue ahead of us.
            if quote.side == "bid":
                self.bid = quote._replace(ahead=quote.ahead - trade.size)
            else:
                self.ask = quote._replace(ahead=quote.ahead - trade.size)
            return
        self.fill(quote, trade.ts, min(left, quote.size), "trade at our price, queue ahead consumed")

    def requote(self, ts: datetime, book: OrderBook) -> None:
        """New quotes from the book at ``ts`` (see the module's rules)."""
        self.books += 1
        p = self.params
        micro = microprice(book)
        best = book.best()
        if best.bid is not None and best.ask is not None:
            self.last_mid = book.mid()
        if micro is None or best.bid is None or best.ask is None:
            self.bid = self.ask = None
            return
        centre = micro - p.skew * self.inventory
        bid_price = MODEL.multiply(MODEL.divide(centre - p.half_spread, p.tick).to_integral_value(ROUND_FLOOR), p.tick)
        ask_price = MODEL.multiply(MODEL.divide(centre + p.half_spread, p.tick).to_integral_value(ROUND_CEILING), p.tick)
        bid_price = min(bid_price, best.ask.price - p.tick)
        ask_price = max(ask_price, best.bid.price + p.tick)
        self.bid = self._place("bid", bid_price, ts, book) if self.inventory < p.max_inventory and bid_price > 0 else None
        self.ask = self._place("ask", ask_price, ts, book) if self.inventory > -p.max_inventory else None

    def _place(self, side: str, price: Decimal, ts: datetime, book: OrderBook) -> Quote:
        current = self.bid if side == "bid" else self.ask
        if current is not None and current.price == price:
            return current._replace(size=self.params.size) if current.size != self.params.size else current
        self.requotes += 1
        ahead = book.quantity_at(side, price) or Decimal(0)
        return Quote(side, price, self.params.size, ts, ahead)

    def pnl(self) -> Optional[Decimal]:
        """Cash plus the inventory marked at the last mid."""
        return None if self.last_mid is None else self.cash + self.inventory * self.last_mid


def run(
    history: HistoryClient,
    exchange: str,
    ticker: str,
    start: datetime,
    end: datetime,
    *,
    params: Params = Params(),
    fills: str = "book",
) -> MarketMaker:
    """Replays the book from ``start`` to ``end`` and runs the market maker over it."""
    mm = MarketMaker(params)
    trades: Iterator[TradeRow] = iter(())
    if fills == "trades":
        trades = (t for t in history.trades(exchange, ticker, start=start, end=end) if isinstance(t, TradeRow))
    pending = next(trades, None)
    for event in history.replay(exchange, ticker, start, end):
        if isinstance(event, GapEvent):
            # No book inside a recorded gap: pull the quotes until the book is known again.
            mm.bid = mm.ask = None
            continue
        if isinstance(event, (BookEvent, SnapshotEvent)):
            while pending is not None and pending.ts <= event.ts:
                mm.fills_from_trade(pending)
                pending = next(trades, None)
            if fills == "book":
                mm.fills_from_book(event.ts, event.book)
            mm.requote(event.ts, event.book)
    return mm


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exchange", default="venue_b")
    parser.add_argument("--ticker", help="default: the exchange's first ticker")
    parser.add_argument("--start", help="RFC 3339 (default: --minutes before --end, not before the first book)")
    parser.add_argument("--end", help="RFC 3339 (default: 5 s ago)")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--fills", choices=("book", "trades"), default="book")
    parser.add_argument("--size", type=Decimal, default=Params.size)
    parser.add_argument("--half-spread", type=Decimal, default=Params.half_spread)
    parser.add_argument("--tick", type=Decimal, default=Params.tick)
    parser.add_argument("--skew", type=Decimal, default=Params.skew)
    parser.add_argument("--max-inventory", type=Decimal, default=Params.max_inventory)
    args = parser.parse_args(argv)
    history = HistoryClient(
        os.environ.get("HISTORY_URL", "http://127.0.0.1:7081"),
        api_key=os.environ.get("API_KEY") or os.environ.get("DEMO_API_KEY"),
    )
    ticker = args.ticker or history.tickers(args.exchange)[0]
    end = datetime.fromisoformat(args.end.replace("Z", "+00:00")) if args.end else datetime.now(timezone.utc) - timedelta(seconds=5)
    if args.start:
        start = datetime.fromisoformat(args.start.replace("Z", "+00:00"))
    else:
        first = history.coverage(args.exchange, ticker).snapshots.first_ts or end
        start = max(first, end - timedelta(minutes=args.minutes))
    params = Params(args.size, args.half_spread, args.tick, args.skew, args.max_inventory)
    mm = run(history, args.exchange, ticker, start, end, params=params, fills=args.fills)
    print(f"{args.exchange} {ticker} from {start.isoformat()} to {end.isoformat()}, fills by {args.fills}")
    print(f"{mm.books} books, {mm.requotes} quotes placed, {len(mm.fills)} fills")
    for f in mm.fills[:20]:
        print(f"  {f.ts.isoformat()}  {f.side:<4} {canonical(f.size):>8} @ {canonical(f.price):<8} inventory {canonical(f.inventory):>8}  ({f.rule})")
    if len(mm.fills) > 20:
        print(f"  … {len(mm.fills) - 20} more")
    pnl = mm.pnl()
    mark = "no book to mark" if mm.last_mid is None else f"marked at mid {canonical(mm.last_mid)}"
    print(f"inventory {canonical(mm.inventory)}, cash {canonical(mm.cash)}, P&L {'-' if pnl is None else canonical(pnl)} ({mark})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
