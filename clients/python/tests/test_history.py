"""HistoryClient against a small local history service (fakes.FakeHistory): rows streamed and paged with cursors
followed (and without cursors, by start_ts), gap markers kept, cut streams refused; rule 7 here — rebuild,
replay, books_at — across gaps, restarts and snapshots, against a plain model; to_pandas."""

import json
import threading
import unittest
from datetime import timedelta
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

from depthgate import BookError, DataError, DeltaRow, Gap, HistoryClient, HttpError
from depthgate.replay import BookEvent, GapEvent, SnapshotEvent
from depthgate.rows import DELTAS, SNAPSHOTS, Where
from depthgate.timestamps import from_ms, parse_ms

from fakes import T0, FakeHistory, Reply, Request, Server, delta, gap, pairs, snap

# A ticker's history: a book at T0, deltas (two at one ts), a snapshot at T0+100 equal to the book then; a gap
# (T0+150, T0+200) closed by a snapshot, with a delta inside it that must never be applied; a gap (T0+300, T0+350)
# closed by an empty book (no snapshot at its end); deltas after it.
SNAPSHOTS_ROWS = [
    snap(T0, "bid", "0.47", "100"),
    snap(T0, "bid", "0.48", "150"),
    snap(T0, "ask", "0.5", "20.25"),
    snap(T0, "ask", "0.51", "7"),
    # T0+100: after the deltas at 10, 10, 20, 40
    snap(T0 + 100, "bid", "0.47", "100"),
    snap(T0 + 100, "bid", "0.49", "5"),
    snap(T0 + 100, "ask", "0.5", "19.25"),
    snap(T0 + 100, "ask", "0.51", "7"),
    snap(T0 + 100, "ask", "0.6", "1"),
    # T0+200: the book after the first gap
    snap(T0 + 200, "bid", "0.3", "10"),
    snap(T0 + 200, "ask", "0.7", "10"),
]
DELTA_ROWS = [
    delta(T0 + 10, 1, "bid", "0.48", "-150"),
    delta(T0 + 10, 2, "bid", "0.49", "5"),
    delta(T0 + 20, 3, "ask", "0.5", "-1"),
    delta(T0 + 40, 4, "ask", "0.6", "1"),
    delta(T0 + 120, 5, "ask", "0.6", "2"),
    delta(T0 + 160, 6, "bid", "0.1", "-999"),  # inside the first gap: never applied
    delta(T0 + 200, 7, "bid", "0.3", "5"),
    delta(T0 + 250, 8, "ask", "0.7", "-10"),
    delta(T0 + 320, 9, "ask", "0.9", "-5"),  # inside the second gap
    delta(T0 + 360, 10, "bid", "0.2", "4"),
    delta(T0 + 360, 11, "ask", "0.8", "6"),
    delta(T0 + 400, 12, "bid", "0.25", "1"),
]
GAPS = [gap(T0 + 150, T0 + 200), gap(T0 + 300, T0 + 350, "stall")]
LAST = T0 + 420


def model(t: int) -> Optional[List[Any]]:
    """Rule 7 by hand: None inside a gap; else (bids, asks) as canonical text pairs."""
    if any(parse_ms(g["from_ts"]) <= t < parse_ms(g["to_ts"]) for g in GAPS):
        return None
    snaps = sorted({parse_ms(s["ts"]) for s in SNAPSHOTS_ROWS if parse_ms(s["ts"]) <= t})
    ends = [parse_ms(g["to_ts"]) for g in GAPS if parse_ms(g["to_ts"]) <= t]
    base = max(snaps + ends)
    levels: Dict[tuple, Decimal] = {}
    for s in SNAPSHOTS_ROWS:
        if parse_ms(s["ts"]) == base:
            levels[(s["side"], Decimal(s["price"]))] = Decimal(s["quantity"])
    for d in DELTA_ROWS:
        if base <= parse_ms(d["ts"]) <= t:
            key = (d["side"], Decimal(d["price"]))
            q = levels.get(key, Decimal(0)) + Decimal(d["quantity_delta"])
            assert q >= 0
            levels[key] = q
            if q == 0:
                del levels[key]
    bids = sorted(((p, q) for (s, p), q in levels.items() if s == "bid"), reverse=True)
    asks = sorted((p, q) for (s, p), q in levels.items() if s == "ask")
    return [pairs(bids), pairs(asks)]


class Fixture(unittest.TestCase):
    history: FakeHistory
    client: HistoryClient

    @classmethod
    def setUpClass(cls) -> None:
        cls.history = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        cls.client = HistoryClient(cls.history.url, api_key="dg_k")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.history.close()


def as_rows(kind: Any, rows: List[Dict[str, Any]]) -> List[Any]:
    return [kind.parse(r, Where()) for r in rows]


class RowsTest(Fixture):
    def test_streams_and_pages_give_exactly_the_rows(self) -> None:
        deltas = as_rows(DELTAS, DELTA_ROWS)
        snapshots = as_rows(SNAPSHOTS, SNAPSHOTS_ROWS)
        self.assertEqual(list(self.client.deltas("venue_b", "KXT")), deltas)
        self.assertEqual(self.client.snapshots("venue_b", "KXT").to_list(), snapshots)
        self.assertEqual(list(self.client.deltas("venue_b", "KXT", transport="pages", page_size=5)), deltas)
        self.assertEqual(list(self.client.snapshots("venue_b", "KXT", transport="pages", page_size=3)), snapshots)
        self.assertEqual(list(self.client.deltas("venue_b", "KXT", page_size=4)), deltas)  # NDJSON cut by limit
        # A range, inclusive at both ends, in any moment form.
        part = list(self.client.deltas("venue_b", "KXT", start=T0 + 10, end=from_ms(T0 + 40)))
        self.assertEqual([d.sequence for d in part], [1, 2, 3, 4])
        part = list(self.client.deltas("venue_b", "KXT", start="2026-03-26T14:00:01.213Z"))
        self.assertEqual(part[0].sequence, 3)
        requests = self.history.server.requests
        self.assertEqual(requests[-1].q("start_ts"), "2026-03-26T14:00:01.213Z")
        self.assertEqual(requests[-1].headers["x-api-key"], "dg_k")

    def test_a_sub_millisecond_start_is_sent_rounded_up_and_an_end_down_as_the_service_reads_them(self) -> None:
        start, end = "2026-03-26T14:00:01.2030001Z", "2026-03-26T14:00:01.2139Z"
        requests = self.history.server.requests
        # The start rounded up: not the deltas of .203, which the service itself would not give.
        self.assertEqual([d.sequence for d in self.client.deltas("venue_b", "KXT", start=start, end=end)], [3])
        self.client.delta_page("venue_b", "KXT", start=start, end=end)
        self.client.coverage("venue_b", "KXT", start=start, end=end)
        self.assertEqual(
            [(r.q("start_ts"), r.q("end_ts")) for r in requests[-3:]],
            [("2026-03-26T14:00:01.204Z", "2026-03-26T14:00:01.213Z")] * 3,
        )

    def test_a_stream_the_service_stops_early_is_continued_with_its_cursor(self) -> None:
        capped = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS, stream_cap=5)
        try:
            client = HistoryClient(capped.url)
            self.assertEqual(list(client.deltas("venue_b", "KXT")), as_rows(DELTAS, DELTA_ROWS))
            cursors = [r.q("cursor") for r in capped.server.requests]
            self.assertEqual(cursors, [None, "5:", "10:"])
            self.assertIsNone(capped.server.requests[1].q("start_ts"))  # a cursor carries its range
        finally:
            capped.close()

    def test_a_service_without_cursors_is_paged_by_start_ts(self) -> None:
        spec = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS, cursors=False)
        try:
            client = HistoryClient(spec.url)
            # Pages of 1 and 2 cut the two deltas of T0+10 and of T0+360 apart: nothing twice, nothing lost.
            for size in (1, 2, 3):
                with self.subTest(size=size):
                    self.assertEqual(list(client.deltas("venue_b", "KXT", transport="pages", page_size=size)), as_rows(DELTAS, DELTA_ROWS))
                    self.assertEqual(list(client.snapshots("venue_b", "KXT", transport="pages", page_size=size)), as_rows(SNAPSHOTS, SNAPSHOTS_ROWS))
        finally:
            spec.close()

    def test_a_service_without_cursors_is_asked_for_each_page_once_reading_again_only_the_ts_it_starts_at(self) -> None:
        # 25 deltas at each ts: runs longer than a page of 10, and than the service's own default of 7.
        rows = [delta(T0 + 10 * (i // 25), i + 1, "bid", "0.4", "1") for i in range(60)]
        spec = FakeHistory([], rows, cursors=False, streams=False, default_limit=7)
        try:
            client = HistoryClient(spec.url)
            # Pages of a size given; and a stream asked for, answered by a JSON page of the service's default size.
            for options in ({"transport": "pages", "page_size": 10}, {}):
                with self.subTest(**options):
                    first = len(spec.server.requests)
                    self.assertEqual(list(client.deltas("venue_b", "KXT", **options)), as_rows(DELTAS, rows))
                    requests, served = spec.server.requests[first:], spec.served[first:]
                    given: set = set()
                    for n, (request, page) in enumerate(zip(requests, served)):
                        again = [r for r in page if r["sequence"] in given]
                        # Paging by start_ts (inclusive, to the millisecond) reads again the rows at the ts it starts
                        # at, and nothing else; and every request but the last brings rows not read before.
                        self.assertEqual({r["ts"] for r in again} - {request.q("start_ts")}, set(), f"request {n}")
                        if n < len(requests) - 1:
                            self.assertLess(len(again), len(page), f"request {n} brought nothing new")
                        given.update(r["sequence"] for r in page)
        finally:
            spec.close()

    def test_gap_markers_come_among_the_rows_in_time_order(self) -> None:
        items = list(self.client.deltas("venue_b", "KXT", gaps=True))
        kinds = ["gap" if isinstance(i, Gap) else i.sequence for i in items]
        self.assertEqual(kinds, [1, 2, 3, 4, 5, "gap", 6, 7, 8, "gap", 9, 10, 11, 12])
        gaps = [i for i in items if isinstance(i, Gap)]
        self.assertEqual([(g.reason, g.from_ts, g.to_ts) for g in gaps], [("disconnect", from_ms(T0 + 150), from_ms(T0 + 200)), ("stall", from_ms(T0 + 300), from_ms(T0 + 350))])
        paged = list(self.client.deltas("venue_b", "KXT", gaps=True, transport="pages", page_size=100))
        self.assertEqual(paged, items)

    def test_pages_and_coverage(self) -> None:
        page = self.client.delta_page("venue_b", "KXT", limit=3)
        self.assertEqual((page.count, [r.sequence for r in page.rows], page.next_cursor), (3, [1, 2, 3], "3:"))
        rest = self.client.delta_page("venue_b", "KXT", cursor=page.next_cursor, limit=100)
        self.assertEqual((rest.count, rest.next_cursor), (len(DELTA_ROWS) - 3, None))
        book_page = self.client.snapshot_page("venue_b", "KXT", limit=1)
        self.assertEqual(len(book_page.rows), 4)  # rounded up to the whole first book
        coverage = self.client.coverage("venue_b", "KXT", start=T0 + 160)
        self.assertEqual([g.reason for g in coverage.gaps], ["disconnect", "stall"])
        self.assertEqual(coverage.deltas.rows, len(DELTA_ROWS))

    def test_cut_streams_are_errors_after_the_rows_already_given(self) -> None:
        good = '{"ts":"2026-03-26T14:00:01.193Z","sequence":1,"side":"bid","price":"0.48","quantity_delta":"1"}\n'
        bodies = {
            "no end line": good,
            "inside a line": good + '{"ts":"2026-03-26T14:00:01.193Z","seq',
            "a wrong count": good + '{"type":"end","count":2,"next_cursor":null}\n',
            "a line after the end": good + '{"type":"end","count":1,"next_cursor":null}\n' + good,
            "a count below zero": good + '{"type":"end","count":-1,"next_cursor":null}\n',
        }
        for name, body in bodies.items():
            with self.subTest(name=name), Server(lambda r, b=body: Reply(200, {"Content-Type": "application/x-ndjson"}, [b.encode()], gzip=True)) as server:
                rows: List[DeltaRow] = []
                with self.assertRaises(DataError) as caught:
                    for row in HistoryClient(server.url).deltas("venue_b", "KXT"):
                        rows.append(row)
                self.assertEqual(len(rows), 1)
                expected = {"a line after the end": "malformed_body", "a count below zero": "malformed_row"}
                self.assertEqual(caught.exception.code, expected.get(name, "stream_cut"))

    def test_arguments_are_checked_before_any_request(self) -> None:
        before = len(self.history.server.requests)
        for call in (
            lambda: self.client.deltas("venue/b", "KXT"),
            lambda: self.client.deltas("venue_b", "KXT", start=1.5e12),
            lambda: self.client.deltas("venue_b", "KXT", page_size=0),
            lambda: self.client.deltas("venue_b", "KXT", fields=["venue_side"]),
            lambda: self.client.book("venue_b", "KXT", depth=0),
            lambda: self.client.bars("venue_b", "KXT", "2m"),
            lambda: self.client.rebuild("venue_b", "KXT", "now"),
        ):
            with self.assertRaises(ValueError):
                it = call()
                next(iter(it))  # type: ignore[call-overload]
        self.assertEqual(len(self.history.server.requests), before)


class TradesAndBarsTest(unittest.TestCase):
    """The trades API as docs/history.md documents it, served by a local stand-in (the history service itself runs
    the client in services/history/src/order-books/python-client.int.test.ts)."""

    def test_trades_stream_bars_pages_and_trade_lines_among_deltas(self) -> None:
        trade = {"ts": "2026-03-26T14:00:01.193Z", "trade_id": "t-1", "price": "0.48", "size": "3", "side": "buy"}
        bar = {"ts": "2026-03-26T14:00:00.000Z", "open": "0.4", "high": "0.5", "low": "0.39", "close": "0.45",
               "volume": "120", "vwap": "0.4425", "trades": 9}

        def handler(r: Request) -> Reply:
            if r.path.endswith("/trades/KXT"):
                lines = [json.dumps(trade), json.dumps({**trade, "trade_id": "t-2", "side": "sell"}),
                         json.dumps({"type": "end", "count": 2, "next_cursor": None})]
                return Reply(200, {"Content-Type": "application/x-ndjson"}, [("\n".join(lines) + "\n").encode()])
            if r.path.endswith("/bars/KXT"):
                second = r.q("cursor") == "p2"
                rows = [{**bar, "ts": "2026-03-26T14:01:00.000Z"}] if second else [bar]
                return Reply.json({"exchange": "venue_b", "ticker": "KXT", "rows": rows, "count": 1,
                                   "next_cursor": None if second else "p2"})
            lines = [json.dumps(DELTA_ROWS[0]), json.dumps({"type": "trade", **trade}),
                     json.dumps({"type": "end", "count": 2, "next_cursor": None})]
            return Reply(200, {"Content-Type": "application/x-ndjson"}, [("\n".join(lines) + "\n").encode()])

        with Server(handler) as server:
            client = HistoryClient(server.url)
            trades = list(client.trades("venue_b", "KXT", fields=["venue_side", "sequence"]))
            self.assertEqual([(t.trade_id, t.side, t.price) for t in trades], [("t-1", "buy", Decimal("0.48")), ("t-2", "sell", Decimal("0.48"))])
            self.assertEqual((server.requests[-1].path, server.requests[-1].q("fields")), ("/api/venue_b/trades/KXT", "venue_side,sequence"))
            bars = list(client.bars("venue_b", "KXT", "1m", start=T0))
            self.assertEqual([b.ts for b in bars], [from_ms(T0 - 1193), from_ms(T0 - 1193 + 60_000)])
            self.assertEqual((bars[0].vwap, bars[0].trades), (Decimal("0.4425"), 9))
            self.assertEqual([r.q("interval") for r in server.requests[-2:]], ["1m", "1m"])
            mixed = list(client.deltas("venue_b", "KXT", trades=True))
            self.assertEqual([type(m).__name__ for m in mixed], ["DeltaRow", "TradeRow"])
            self.assertEqual(server.requests[-1].q("include"), "trades")


    def test_the_trades_gaps_among_deltas_with_trades_streamed_and_paged(self) -> None:
        # The first delta at T0 + 10, the trades' gap from then, the trade after it: one order, streamed or paged.
        trade = {"type": "trade", "ts": from_ms(T0 + 30).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                 "trade_id": "t-1", "price": "0.48", "size": "3", "side": "buy"}
        tgap = gap(T0 + 10, T0 + 25, "no_backfill")

        def handler(r: Request) -> Reply:
            if r.q("format") == "ndjson":
                lines = [json.dumps(DELTA_ROWS[0]), json.dumps({"type": "trades_gap", **tgap}), json.dumps(trade),
                         json.dumps({"type": "end", "count": 2, "next_cursor": None})]
                return Reply(200, {"Content-Type": "application/x-ndjson"}, [("\n".join(lines) + "\n").encode()])
            return Reply.json({"exchange": "venue_b", "ticker": "KXT", "rows": [DELTA_ROWS[0], trade], "count": 2,
                               "gaps": [], "trades_gaps": [tgap], "next_cursor": None})

        with Server(handler) as server:
            client = HistoryClient(server.url)
            for transport in ("stream", "pages"):
                mixed = list(client.deltas("venue_b", "KXT", trades=True, gaps=True, transport=transport))
                self.assertEqual([type(m).__name__ for m in mixed], ["DeltaRow", "TradesGap", "TradeRow"], transport)
                self.assertIsInstance(mixed[1], Gap)
                self.assertEqual((mixed[1].reason, mixed[1].from_ts), ("no_backfill", from_ms(T0 + 10)), transport)
                self.assertEqual(sorted(server.requests[-1].q("include").split(",")), ["gaps", "trades"])


class VerifiedTest(unittest.TestCase):
    """Issue 24's fields as the service writes them (docs/history.md, "Verified books"): ``venue_seq`` on rows asked
    for with ``fields``, the book's ``verified`` and the coverage's ``verifications``; an unknown method is refused."""

    BOOK = {"exchange": "venue_b", "ticker": "KXT", "at": "2026-03-26T14:00:02.000Z", "status": "ok",
            "snapshot_ts": "2026-03-26T14:00:01.000Z", "last_delta": None, "gap": None, "base_gap": None,
            "bids": [{"price": "0.48", "quantity": "10"}], "asks": [{"price": "0.5", "quantity": "3"}],
            "verified": {"before": "2026-03-26T14:00:01.000Z", "before_method": "snapshot",
                         "after": "2026-03-26T14:01:00.000Z", "after_method": "rest_book"}}
    COVERAGE = {"exchange": "venue_b", "ticker": "KXT", "start_ts": "2026-03-26T14:00:00.000Z", "end_ts": None,
                "snapshots": {"rows": 2, "books": 1, "first_ts": "2026-03-26T14:00:01.000Z", "last_ts": "2026-03-26T14:00:01.000Z"},
                "deltas": {"rows": 1, "first_ts": "2026-03-26T14:00:01.193Z", "last_ts": "2026-03-26T14:00:01.193Z"},
                "gaps": [],
                "verifications": {"count": 3, "first_ts": "2026-03-26T14:00:01.000Z", "last_ts": "2026-03-26T14:01:00.000Z",
                                  "methods": {"rest_book": 1, "checksum": 0, "snapshot": 2}}}

    def test_venue_seq_verified_and_verifications(self) -> None:
        book = dict(self.BOOK)

        def handler(r: Request) -> Reply:
            if r.path.endswith("/book/KXT"):
                return Reply.json(book)
            if r.path.endswith("/coverage/KXT"):
                return Reply.json(self.COVERAGE)
            line = {**DELTA_ROWS[0], "venue_seq": "7:1042"}
            body = json.dumps(line) + "\n" + json.dumps({"type": "end", "count": 1, "next_cursor": None}) + "\n"
            return Reply(200, {"Content-Type": "application/x-ndjson"}, [body.encode()])

        with Server(handler) as server:
            client = HistoryClient(server.url)
            rows = list(client.deltas("venue_b", "KXT", fields=["venue_seq"]))
            self.assertEqual([r.venue_seq for r in rows], ["7:1042"])
            self.assertEqual(server.requests[-1].q("fields"), "venue_seq")
            answer = client.book("venue_b", "KXT")
            assert answer.verified is not None
            self.assertEqual((answer.verified.before, answer.verified.before_method), (from_ms(T0 - 193), "snapshot"))
            self.assertEqual((answer.verified.after, answer.verified.after_method), (from_ms(T0 - 193 + 59_000), "rest_book"))
            coverage = client.coverage("venue_b", "KXT")
            assert coverage.verifications is not None
            self.assertEqual((coverage.verifications.count, coverage.verifications.methods["snapshot"]), (3, 2))
            book["verified"] = {**self.BOOK["verified"], "after_method": "guess"}  # type: ignore[dict-item]
            with self.assertRaises(DataError) as caught:
                client.book("venue_b", "KXT")
            self.assertEqual(caught.exception.code, "malformed_body")
            del book["verified"]
            self.assertIsNone(client.book("venue_b", "KXT").verified)  # a service older than the field


class RuleSevenTest(Fixture):
    moments = sorted({T0, T0 + 9, T0 + 10, T0 + 11, T0 + 40, T0 + 99, T0 + 100, T0 + 120, T0 + 149, T0 + 150, T0 + 170,
                      T0 + 199, T0 + 200, T0 + 250, T0 + 299, T0 + 300, T0 + 349, T0 + 350, T0 + 359, T0 + 360, T0 + 400, LAST})

    def test_rebuild_equals_the_model_and_says_in_gap_inside_gaps(self) -> None:
        for t in self.moments:
            want = model(t)
            with self.subTest(t=t - T0):
                if want is None:
                    with self.assertRaises(BookError) as caught:
                        self.client.rebuild("venue_b", "KXT", t)
                    self.assertEqual(caught.exception.code, "in_gap")
                    continue
                book = self.client.rebuild("venue_b", "KXT", t)
                self.assertEqual([pairs(book.bids()), pairs(book.asks())], want)

    def test_books_at_gives_the_same_books_in_one_pass(self) -> None:
        before = len(self.history.server.requests)
        books = self.client.books_at("venue_b", "KXT", [from_ms(t) for t in reversed(self.moments)])
        # The starting snapshot, coverage, deltas, the later snapshots' digests, and the rows of a book a gap restarts
        # from (with digests those are not at hand): one per gap at most.
        self.assertLessEqual(len(self.history.server.requests) - before, 4 + len(GAPS))
        self.assertEqual([b.at for b in books], [from_ms(t) for t in self.moments])
        for b in books:
            want = model(int((b.at - from_ms(0)) / timedelta(milliseconds=1)))
            with self.subTest(at=b.at):
                if want is None:
                    self.assertIsNone(b.book)
                    assert b.gap is not None
                    self.assertLessEqual(b.gap.from_ts, b.at)
                    self.assertLess(b.at, b.gap.to_ts)
                else:
                    assert b.book is not None
                    self.assertIsNone(b.gap)
                    self.assertEqual([pairs(b.book.bids()), pairs(b.book.asks())], want)

    def test_replay_reports_books_snapshots_gaps_and_restarts(self) -> None:
        events = []
        for e in self.client.replay("venue_b", "KXT", T0, LAST):
            if isinstance(e, BookEvent):
                events.append(("book", e.ts - from_ms(T0), model(int((e.ts - from_ms(0)) / timedelta(milliseconds=1))) == [pairs(e.book.bids()), pairs(e.book.asks())]))
            elif isinstance(e, SnapshotEvent):
                events.append(("snapshot", e.ts - from_ms(T0), e.restarted))
            else:
                assert isinstance(e, GapEvent)
                events.append(("gap", e.gap.reason))
        ms = lambda n: timedelta(milliseconds=n)  # noqa: E731
        self.assertEqual(
            events,
            [
                ("book", ms(10), True),
                ("book", ms(20), True),
                ("book", ms(40), True),
                ("snapshot", ms(100), False),
                ("book", ms(120), True),
                ("gap", "disconnect"),
                ("snapshot", ms(200), True),
                ("book", ms(200), True),
                ("book", ms(250), True),
                ("gap", "stall"),
                ("snapshot", ms(350), True),
                ("book", ms(360), True),
                ("book", ms(400), True),
            ],
        )
        with self.assertRaises(BookError) as caught:
            list(self.client.replay("venue_b", "KXT", T0, LAST, on_gap="error"))
        self.assertEqual(caught.exception.code, "in_gap")
        # Without checking snapshots: the same books.
        fast = [(e.ts, pairs(e.book.bids())) for e in self.client.replay("venue_b", "KXT", T0, LAST, verify_snapshots=False) if isinstance(e, BookEvent)]
        slow = [(e.ts, pairs(e.book.bids())) for e in self.client.replay("venue_b", "KXT", T0, LAST) if isinstance(e, BookEvent)]
        self.assertEqual(fast, slow)

    def test_a_snapshot_that_disagrees_with_the_replayed_book_is_an_error(self) -> None:
        wrong = [dict(s) for s in SNAPSHOTS_ROWS]
        wrong[5]["quantity"] = "5.5"  # the T0+100 book's 0.49 bid
        history = FakeHistory(wrong, DELTA_ROWS, GAPS)
        try:
            with self.assertRaises(BookError) as caught:
                list(HistoryClient(history.url).replay("venue_b", "KXT", T0, LAST))
            self.assertEqual((caught.exception.code, caught.exception.ts), ("snapshot_mismatch", from_ms(T0 + 100)))
            with self.assertRaises(BookError) as caught:
                HistoryClient(history.url).books_at("venue_b", "KXT", [T0 + 50, T0 + 120])
            self.assertEqual(caught.exception.code, "snapshot_mismatch")
        finally:
            history.close()

    def test_nothing_to_start_from_is_no_snapshot(self) -> None:
        with self.assertRaises(BookError) as caught:
            self.client.rebuild("venue_b", "KXT", T0 - 1, lookback=timedelta(hours=1))
        self.assertEqual(caught.exception.code, "no_snapshot")


class TogetherTest(unittest.TestCase):
    def test_the_gaps_the_first_deltas_and_the_first_later_snapshot_are_asked_for_at_once(self) -> None:
        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        # The first request of each of the three waits here for the other two (the timeout only keeps a failing run
        # finite: asked one after another, the first waits it out, the barrier breaks and nothing is recorded).
        meet = threading.Barrier(3)
        met: List[str] = []
        waiting = {"coverage", "deltas", "digests"}
        lock = threading.Lock()

        def handler(req: Request) -> Reply:
            what = (
                "coverage" if "/coverage/" in req.path
                else "deltas" if "/deltas/" in req.path
                else "digests" if req.q("format") == "digest"
                else None
            )
            with lock:
                first = what in waiting
                waiting.discard(what or "")
            if first:
                try:
                    meet.wait(timeout=10)
                    with lock:
                        met.append(str(what))
                except threading.BrokenBarrierError:
                    pass
            return real.handle(req)

        server = Server(handler)
        client = HistoryClient(server.url)
        direct = HistoryClient(real.url)
        try:
            got = [(type(e).__name__, getattr(e, "ts", None)) for e in client.replay("venue_b", "KXT", T0, LAST)]
            want = [(type(e).__name__, getattr(e, "ts", None)) for e in direct.replay("venue_b", "KXT", T0, LAST)]
            self.assertEqual(sorted(met), ["coverage", "deltas", "digests"])
            self.assertEqual(got, want)
            # The starting book was read before them (they begin at its moment).
            self.assertEqual(server.requests[0].path, "/api/venue_b/snapshots/KXT")
        finally:
            client.close()
            direct.close()
            server.close()
            real.close()

    def test_every_request_runs_in_the_callers_context(self) -> None:
        # A tracer's current span or a log's request id lives in a contextvars.ContextVar: the requests sent from the
        # pool's threads must see the caller's, as the one sent from the calling thread does.
        import contextvars

        request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")
        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        client = HistoryClient(real.url)
        seen: List[Tuple[str, str]] = []
        sent = client.http.request

        def request(target: str, *args: Any, **kwargs: Any) -> Any:
            seen.append((target.split("?")[0], request_id.get()))
            return sent(target, *args, **kwargs)

        client.http.request = request  # type: ignore[method-assign]
        try:
            request_id.set("req-42")
            events = list(client.replay("venue_b", "KXT", T0, LAST))
            self.assertGreater(len(events), 0)
            paths = {path for path, _ in seen}
            self.assertTrue({"/api/venue_b/coverage/KXT", "/api/venue_b/deltas/KXT"} <= paths, paths)
            self.assertEqual({rid for _, rid in seen}, {"req-42"})
        finally:
            client.close()
            real.close()

    def test_an_interrupt_while_the_deltas_are_read_is_not_held_back_behind_another_failure(self) -> None:
        import depthgate.replay as replay_module

        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)

        def handler(req: Request) -> Reply:
            if "/coverage/" in req.path:
                return Reply.json({"error": "forbidden", "message": "no"}, 403)
            return real.handle(req)

        class Interrupted(replay_module._Deltas):
            def __init__(self, source: Any) -> None:
                raise KeyboardInterrupt

        server = Server(handler)
        client = HistoryClient(server.url)
        original = replay_module._Deltas
        replay_module._Deltas = Interrupted  # type: ignore[misc]
        try:
            with self.assertRaises(KeyboardInterrupt):
                list(client.replay("venue_b", "KXT", T0, LAST))
        finally:
            replay_module._Deltas = original  # type: ignore[misc]
            client.close()
            server.close()
            real.close()

    def test_a_failure_among_them_is_raised_once_the_others_are_over(self) -> None:
        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        refused: List[str] = []

        def handler(req: Request) -> Reply:
            if "/coverage/" in req.path and not refused:
                refused.append(req.path)
                return Reply.json({"error": "forbidden", "message": "no"}, 403)
            return real.handle(req)

        server = Server(handler)
        client = HistoryClient(server.url)
        try:
            with self.assertRaises(HttpError) as caught:
                list(client.replay("venue_b", "KXT", T0, LAST))
            self.assertEqual(caught.exception.status, 403)
            # The deltas were asked for beside it; their answer was closed, and the client serves the next replay.
            self.assertIn("/api/venue_b/deltas/KXT", [r.path for r in server.requests])
            again = [(type(e).__name__, getattr(e, "ts", None)) for e in client.replay("venue_b", "KXT", T0, LAST)]
            self.assertEqual(sum(1 for kind, _ in again if kind == "BookEvent"), 8)
        finally:
            client.close()
            server.close()
            real.close()


try:
    import pandas  # noqa: F401

    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


@unittest.skipUnless(HAVE_PANDAS, "pandas is not installed (./dev test installs python3-pandas)")
class PandasTest(Fixture):
    def test_rows_books_and_gaps_as_frames(self) -> None:
        frame = self.client.deltas("venue_b", "KXT").to_pandas()
        self.assertEqual(list(frame.columns), list(DeltaRow._fields))
        self.assertEqual(len(frame), len(DELTA_ROWS))
        self.assertEqual(str(frame["ts"].dtype), "datetime64[ns, UTC]")
        self.assertEqual(frame["quantity_delta"].iloc[0], Decimal("-150"))
        self.assertIsInstance(frame["price"].iloc[0], Decimal)
        self.assertEqual(frame["quantity_delta"].sum(), sum(Decimal(d["quantity_delta"]) for d in DELTA_ROWS))
        floats = self.client.deltas("venue_b", "KXT").to_pandas(decimals="float")
        self.assertEqual(str(floats["price"].dtype), "float64")
        mixed = self.client.deltas("venue_b", "KXT", gaps=True).to_pandas()
        self.assertEqual(list(mixed["type"]).count("gap"), 2)
        self.assertEqual(mixed.loc[mixed["type"] == "gap", "reason"].tolist(), ["disconnect", "stall"])
        self.assertEqual(str(mixed["sequence"].dtype), "Int64")
        empty = self.client.deltas("venue_b", "KXT", start=LAST + 1).to_pandas()
        self.assertEqual((len(empty), list(empty.columns)), (0, list(DeltaRow._fields)))
        book = self.client.rebuild("venue_b", "KXT", T0).to_pandas()
        self.assertEqual(book.to_dict("records")[0], {"side": "bid", "level": 1, "price": Decimal("0.48"), "quantity": Decimal("150")})
        self.assertEqual(list(book["side"]), ["bid", "bid", "ask", "ask"])


class RequirePandasTest(unittest.TestCase):
    def test_pandas_is_there_when_required(self) -> None:
        import os

        if os.environ.get("DG_REQUIRE_PANDAS") == "1":
            self.assertTrue(HAVE_PANDAS, "DG_REQUIRE_PANDAS=1 (./dev test) but pandas cannot be imported")


if __name__ == "__main__":
    unittest.main()
