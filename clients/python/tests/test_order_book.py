"""The book's rules (rule 7 as the service records it) and its errors, as the TypeScript client's order-book tests
check them; and rule 7 against a plain model on random deltas."""

import random
import unittest
from decimal import Decimal
from typing import Dict, List, Tuple

from depthgate import BookError, DeltaRow, OrderBook, SnapshotRow
from depthgate.timestamps import from_ms

from fakes import T0

D = Decimal


def snap(ts: int, side: str, price: str, quantity: str) -> SnapshotRow:
    return SnapshotRow(from_ms(ts), side, D(price), D(quantity))


def delta(ts: int, sequence: int, side: str, price: str, quantity_delta: str) -> DeltaRow:
    return DeltaRow(from_ms(ts), sequence, side, D(price), D(quantity_delta))


BOOK = [snap(T0, "bid", "0.47", "100"), snap(T0, "bid", "0.48", "150"), snap(T0, "ask", "0.5", "20.25"), snap(T0, "ask", "0.51", "7")]


def text(levels: List) -> List[Tuple[str, str]]:
    from depthgate import canonical

    return [(canonical(p), canonical(q)) for p, q in levels]


class RuleSevenTest(unittest.TestCase):
    def test_a_snapshot_best_first(self) -> None:
        book = OrderBook.from_snapshot(BOOK)
        self.assertEqual(text(book.bids()), [("0.48", "150"), ("0.47", "100")])
        self.assertEqual(text(book.asks()), [("0.5", "20.25"), ("0.51", "7")])
        self.assertEqual(book.best().bid, (D("0.48"), D(150)))
        self.assertEqual(book.spread(), D("0.02"))
        self.assertEqual(book.mid(), D("0.49"))
        self.assertEqual(str(book.mid()), "0.49")
        self.assertEqual(book.ts, from_ms(T0))
        self.assertEqual(book.snapshot_ts, from_ms(T0))
        self.assertEqual(text(book.bids(1)), [("0.48", "150")])
        self.assertEqual(book.bids(0), [])
        self.assertEqual(len(book.asks(10)), 2)

    def test_deltas_add_remove_and_create_levels(self) -> None:
        book = OrderBook.from_snapshot(BOOK)
        book.apply(delta(T0, 1, "bid", "0.48", "-150"))
        book.apply(delta(T0, 2, "bid", "0.49", "5.5"))
        book.apply(delta(T0 + 1, 3, "ask", "0.5", "-0.25"))
        book.apply(delta(T0 + 1, 4, "ask", "0.50", "0.000000000000000001"))
        book.settle()
        self.assertEqual(text(book.bids()), [("0.49", "5.5"), ("0.47", "100")])
        self.assertEqual(text(book.asks())[0], ("0.5", "20.000000000000000001"))
        self.assertIsNone(book.quantity_at("bid", "0.4800"))
        self.assertEqual(book.quantity_at("ask", "0.5000"), D("20.000000000000000001"))
        self.assertEqual(book.ts, from_ms(T0 + 1))
        self.assertEqual(book.last_sequence, 4)
        # A price given with other text is the same level.
        book.apply(delta(T0 + 2, 5, "bid", "0.4900", "-5.5"))
        self.assertEqual(text(book.bids()), [("0.47", "100")])

    def test_from_rows_orders_equal_ts_by_sequence(self) -> None:
        deltas = [delta(T0 + 5, 12, "bid", "0.48", "-155"), delta(T0 + 5, 10, "bid", "0.48", "5")]
        book = OrderBook.from_rows(BOOK, deltas)
        self.assertEqual(text(book.bids()), [("0.47", "100")])
        # Applied as given, the first already fails: never a silent reordering.
        with self.assertRaises(BookError) as caught:
            OrderBook.from_snapshot(BOOK).apply_all(deltas)
        self.assertEqual(caught.exception.code, "negative_level")
        given = [delta(T0 + 5, 12, "bid", "0.48", "1"), delta(T0 + 5, 10, "bid", "0.48", "1")]
        with self.assertRaises(BookError) as caught:
            OrderBook.from_snapshot(BOOK).apply_all(given)
        self.assertEqual(caught.exception.code, "out_of_order")
        self.assertEqual((caught.exception.ts, caught.exception.sequence), (from_ms(T0 + 5), 10))

    def test_a_negative_level_is_an_error_naming_where_and_changes_nothing(self) -> None:
        book = OrderBook.from_snapshot(BOOK, exchange="venue_b", ticker="KXT")
        with self.assertRaises(BookError) as caught:
            book.apply(delta(T0 + 7, 3, "bid", "0.48", "-150.01"))
        e = caught.exception
        self.assertEqual(e.code, "negative_level")
        self.assertEqual((e.exchange, e.ticker, e.ts, e.sequence, e.side, e.price), ("venue_b", "KXT", from_ms(T0 + 7), 3, "bid", D("0.48")))
        self.assertIn("150 to -0.01", str(e))
        self.assertIn("venue_b, KXT, ts 2026-03-26T14:00:01.200Z, sequence 3, bid, price 0.48", str(e))
        self.assertEqual(book.quantity_at("bid", "0.48"), D(150))
        self.assertEqual(book.ts, from_ms(T0))
        with self.assertRaises(BookError) as caught:
            OrderBook.from_snapshot(BOOK).apply(delta(T0, 1, "ask", "0.9", "-1"))
        self.assertEqual(caught.exception.code, "negative_level")
        with self.assertRaises(BookError) as caught:
            OrderBook.from_snapshot([snap(T0, "bid", "0.4", "-1")])
        self.assertEqual(caught.exception.code, "negative_level")

    def test_a_crossed_book_is_an_error_once_the_moment_is_complete(self) -> None:
        book = OrderBook.from_snapshot(BOOK)
        # The book moves up within one ts: a bid at the old best ask comes before that ask is taken away.
        book.apply(delta(T0 + 10, 1, "bid", "0.5", "3"))
        book.apply(delta(T0 + 10, 2, "ask", "0.5", "-20.25"))
        book.apply(delta(T0 + 11, 3, "bid", "0.51", "1"))
        with self.assertRaises(BookError) as caught:
            book.apply(delta(T0 + 12, 4, "bid", "0.2", "1"))
        self.assertEqual(caught.exception.code, "crossed_book")
        self.assertEqual(caught.exception.ts, from_ms(T0 + 11))
        settled = OrderBook.from_snapshot(BOOK)
        settled.apply(delta(T0 + 10, 1, "bid", "0.5", "3"))
        with self.assertRaises(BookError) as caught:
            settled.settle()
        self.assertEqual(caught.exception.code, "crossed_book")
        with self.assertRaises(BookError):
            OrderBook.from_snapshot([*BOOK, snap(T0, "bid", "0.6", "1")])
        OrderBook.from_snapshot([*BOOK, snap(T0, "bid", "0.6", "1")], check_crossed=False)

    def test_out_of_order_and_malformed_snapshots(self) -> None:
        book = OrderBook.from_snapshot(BOOK)
        with self.assertRaises(BookError) as caught:
            book.apply(delta(T0 - 1, 1, "bid", "0.48", "1"))
        self.assertEqual(caught.exception.code, "out_of_order")
        book.apply(delta(T0, 5, "bid", "0.48", "1"))
        with self.assertRaises(BookError) as caught:
            book.apply(delta(T0, 5, "bid", "0.48", "1"))
        self.assertEqual(caught.exception.code, "out_of_order")
        with self.assertRaises(BookError) as caught:
            OrderBook().apply(delta(T0, 1, "bid", "0.48", "1"))
        self.assertEqual(caught.exception.code, "no_snapshot")
        with self.assertRaises(BookError) as caught:
            OrderBook.from_snapshot([snap(T0, "bid", "0.47", "1"), snap(T0 + 1, "bid", "0.46", "1")])
        self.assertEqual(caught.exception.code, "out_of_order")
        with self.assertRaises(BookError) as caught:
            OrderBook.from_snapshot([snap(T0, "bid", "0.47", "1"), snap(T0, "bid", "0.4700", "2")])
        self.assertEqual(caught.exception.code, "out_of_order")
        # A zero level is no level; an empty snapshot placed at a moment is an empty book there.
        book = OrderBook.from_snapshot([snap(T0, "bid", "0.47", "0"), snap(T0, "ask", "0.5", "1")])
        self.assertEqual((book.bids(), len(book.asks())), ([], 1))
        empty = OrderBook()
        empty.load_snapshot([], from_ms(T0))
        self.assertEqual((empty.ts, empty.bids(), empty.asks(), empty.checksum()), (from_ms(T0), [], [], 0))

    def test_copies_are_independent_and_equality_is_by_value(self) -> None:
        book = OrderBook.from_snapshot(BOOK)
        copy = book.copy()
        book.apply(delta(T0 + 1, 1, "ask", "0.5", "-20.25"))
        self.assertEqual(copy.quantity_at("ask", "0.5"), D("20.25"))
        self.assertNotEqual(book, copy)
        copy.apply(delta(T0 + 1, 1, "ask", "0.500", "-20.250"))
        self.assertEqual(book, copy)
        self.assertTrue(book.equals_snapshot([snap(T0 + 1, "bid", "0.47", "100"), snap(T0 + 1, "bid", "0.480", "150.0"), snap(T0 + 1, "ask", "0.51", "7")]))
        self.assertFalse(book.equals_snapshot([snap(T0 + 1, "bid", "0.47", "100"), snap(T0 + 1, "ask", "0.51", "7")]))
        self.assertFalse(book.equals_snapshot([snap(T0 + 1, "bid", "0.47", "100"), snap(T0 + 1, "bid", "0.47", "100"), snap(T0 + 1, "ask", "0.51", "7")]))
        state = book.to_dict(1)
        self.assertEqual(state["bids"], [{"price": "0.48", "quantity": "150"}])
        self.assertEqual(state["ts"], "2026-03-26T14:00:01.194Z")
        self.assertIn("best 150@0.48 / 7@0.51", repr(book))


class AgainstAModelTest(unittest.TestCase):
    """Random deltas applied to the book and to a dict of exact quantities: the same levels, in the same order."""

    def test_random_walks(self) -> None:
        rng = random.Random(7)
        for run in range(30):
            model: Dict[Tuple[str, Decimal], Decimal] = {}
            rows = []
            for i in range(rng.randint(0, 8)):
                p = D(rng.randint(1, 49)) / 100
                if ("bid", p) not in model:
                    model[("bid", p)] = D(rng.randint(1, 10_000)) / 100
                    rows.append(SnapshotRow(from_ms(T0), "bid", p, model[("bid", p)]))
                p = D(rng.randint(51, 99)) / 100
                if ("ask", p) not in model:
                    model[("ask", p)] = D(rng.randint(1, 10_000)) / 100
                    rows.append(SnapshotRow(from_ms(T0), "ask", p, model[("ask", p)]))
            book = OrderBook()
            book.load_snapshot(rows, from_ms(T0))  # placed: a snapshot may have no rows
            seq, ts = 0, T0
            for _ in range(300):
                side = rng.choice(("bid", "ask"))
                p = D(rng.randint(1, 49) if side == "bid" else rng.randint(51, 99)) / 100
                have = model.get((side, p), D(0))
                change = -have if have and rng.random() < 0.3 else D(rng.randint(-int(have * 100) if have else 1, 5000)) / 100
                if have + change < 0 or change == 0:
                    continue
                if rng.random() < 0.5:
                    ts += rng.randint(1, 50)
                seq += 1
                book.apply(DeltaRow(from_ms(ts), seq, side, p, change))
                model[(side, p)] = have + change
                if model[(side, p)] == 0:
                    del model[(side, p)]
            book.settle()
            bids = sorted(((p, q) for (s, p), q in model.items() if s == "bid"), reverse=True)
            asks = sorted((p, q) for (s, p), q in model.items() if s == "ask")
            with self.subTest(run=run):
                self.assertEqual([tuple(l) for l in book.bids()], bids)
                self.assertEqual([tuple(l) for l in book.asks()], asks)
                self.assertEqual(book.ts, from_ms(ts) if seq else from_ms(T0))


if __name__ == "__main__":
    unittest.main()
