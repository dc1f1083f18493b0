"""The worked backtest's rules (examples/backtest.py) on books and trades made by hand: the microprice, the quotes
(rounding, skew, never crossing, the inventory limit, queue kept when the price stays), and both fill rules."""

import sys
import unittest
from decimal import Decimal
from pathlib import Path

from depthgate import OrderBook, SnapshotRow, TradeRow
from depthgate.timestamps import from_ms

from fakes import T0

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import backtest  # noqa: E402

D = Decimal


def book_at(ms: int, bids, asks) -> OrderBook:
    rows = [SnapshotRow(from_ms(ms), "bid", D(p), D(q)) for p, q in bids]
    rows += [SnapshotRow(from_ms(ms), "ask", D(p), D(q)) for p, q in asks]
    return OrderBook.from_snapshot(rows)


BOOK = book_at(T0, [("0.48", "150"), ("0.47", "20")], [("0.5", "50"), ("0.51", "70")])


def trade(ms: int, side: str, price: str, size: str) -> TradeRow:
    return TradeRow(from_ms(ms), f"t{ms}", D(price), D(size), side)


class QuotesTest(unittest.TestCase):
    def test_microprice_and_quotes_around_it(self) -> None:
        self.assertEqual(backtest.microprice(BOOK), D("0.495"))  # (0.48 × 50 + 0.5 × 150) / 200
        mm = backtest.MarketMaker()
        mm.requote(from_ms(T0), BOOK)
        assert mm.bid is not None and mm.ask is not None
        self.assertEqual((mm.bid.price, mm.ask.price), (D("0.48"), D("0.51")))  # 0.485 down, 0.505 up to the tick
        self.assertEqual((mm.bid.ahead, mm.ask.ahead), (D(150), D(70)))  # the queue displayed at our prices
        self.assertEqual(mm.last_mid, D("0.49"))
        placed = mm.bid
        mm.requote(from_ms(T0 + 5), BOOK)
        self.assertIs(mm.bid, placed)  # same price: the quote keeps its place
        self.assertEqual(mm.requotes, 2)

    def test_skew_never_crossing_and_the_inventory_limit(self) -> None:
        mm = backtest.MarketMaker(backtest.Params(skew=D("0.01")))
        mm.inventory = D(2)  # long: both quotes move down by 0.02
        mm.requote(from_ms(T0), BOOK)
        assert mm.bid is not None and mm.ask is not None
        self.assertEqual((mm.bid.price, mm.ask.price), (D("0.46"), D("0.49")))
        tight = book_at(T0, [("0.49", "1")], [("0.5", "1")])
        mm = backtest.MarketMaker(backtest.Params(half_spread=D(0)))
        mm.requote(from_ms(T0), tight)
        assert mm.bid is not None and mm.ask is not None
        self.assertLess(mm.bid.price, D("0.5"))
        self.assertGreater(mm.ask.price, D("0.49"))
        mm = backtest.MarketMaker(backtest.Params(max_inventory=D(10)))
        mm.inventory = D(10)
        mm.requote(from_ms(T0), BOOK)
        self.assertIsNone(mm.bid)
        self.assertIsNotNone(mm.ask)


class FillsTest(unittest.TestCase):
    def test_book_fills_when_the_other_side_reaches_our_price(self) -> None:
        mm = backtest.MarketMaker()
        mm.requote(from_ms(T0), BOOK)  # bid 0.48, ask 0.51
        joined = book_at(T0 + 1, [("0.48", "400")], [("0.5", "5")])  # others join our bid: no fill
        mm.fills_from_book(from_ms(T0 + 1), joined)
        self.assertEqual(mm.fills, [])
        touch = book_at(T0 + 1, [("0.51", "5")], [("0.52", "5")])  # the best bid comes up to our ask: a fill
        mm.fills_from_book(from_ms(T0 + 1), touch)
        self.assertEqual([(f.side, f.price, f.size) for f in mm.fills], [("sell", D("0.51"), D(10))])
        self.assertEqual((mm.inventory, mm.cash, mm.ask), (D(-10), D("5.1"), None))
        still = book_at(T0 + 2, [("0.47", "5")], [("0.49", "5")])  # best ask above our bid: nothing
        mm.fills_from_book(from_ms(T0 + 2), still)
        self.assertEqual(len(mm.fills), 1)
        through = book_at(T0 + 3, [("0.46", "5")], [("0.48", "5")])
        mm.fills_from_book(from_ms(T0 + 3), through)
        self.assertEqual((mm.inventory, mm.cash), (D(0), D("0.3")))
        mm.last_mid = D("0.47")
        self.assertEqual(mm.pnl(), D("0.3"))

    def test_trade_fills_wait_for_the_queue_ahead(self) -> None:
        mm = backtest.MarketMaker()
        mm.requote(from_ms(T0), BOOK)  # bid 0.48 behind 150, ask 0.51 behind 70
        mm.fills_from_trade(trade(T0, "sell", "0.48", "500"))  # not after the quote was placed: ignored
        mm.fills_from_trade(trade(T0 + 1, "sell", "0.48", "100"))  # takes 100 of the 150 ahead
        mm.fills_from_trade(trade(T0 + 2, "buy", "0.5", "30"))  # a buy below our ask: not ours
        self.assertEqual(mm.fills, [])
        assert mm.bid is not None
        self.assertEqual(mm.bid.ahead, D(50))
        mm.fills_from_trade(trade(T0 + 3, "sell", "0.48", "54"))  # 50 ahead, then 4 for us
        self.assertEqual([(f.side, f.size) for f in mm.fills], [("buy", D(4))])
        assert mm.bid is not None
        self.assertEqual((mm.bid.size, mm.bid.ahead), (D(6), D(0)))
        mm.fills_from_trade(trade(T0 + 4, "sell", "0.47", "1"))  # through our price: the rest, in full
        self.assertEqual([(f.size, f.rule) for f in mm.fills][-1], (D(6), "trade through our price"))
        self.assertEqual((mm.inventory, mm.bid), (D(10), None))
        mm.fills_from_trade(trade(T0 + 5, "buy", "0.52", "1"))
        self.assertEqual((mm.inventory, mm.cash), (D(0), D("-4.8") + D("5.1")))


if __name__ == "__main__":
    unittest.main()
