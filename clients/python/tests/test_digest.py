"""The book digest (depthgate.digest) — the TypeScript client's numbers — and replay checking recorded snapshots by
their digests (format=digest), or by their rows against a service without digests."""

import random
import re
import unittest
from decimal import Decimal

from depthgate import BookError, DataError, HistoryClient, OrderBook
from depthgate.digest import DIGEST_MODULUS, book_digest, level_weight, murmur3
from depthgate.rows import DeltaRow, SnapshotRow

from depthgate.timestamps import from_ms as _dt

from fakes import T0, FakeHistory, Reply, Request, Server
from test_history import DELTA_ROWS, GAPS, LAST, SNAPSHOTS_ROWS


class DigestTest(unittest.TestCase):
    def test_murmur3_gives_the_published_values(self) -> None:
        self.assertEqual(murmur3(b"", 0), 0)
        self.assertEqual(murmur3(b"", 1), 0x514E28B7)
        self.assertEqual(murmur3(b"hello", 0), 0x248BFA47)
        self.assertEqual(murmur3(b"Hello, world!", 1234), 0xFAF6CDB3)
        self.assertEqual(murmur3(b"The quick brown fox jumps over the lazy dog", 0), 0x2E4FF723)

    def test_the_documented_example_and_the_typescript_clients_numbers(self) -> None:
        self.assertEqual((murmur3(b"bid:0.48", 0), murmur3(b"bid:0.48", 1)), (834796200, 304640021))
        self.assertEqual(level_weight("bid", "0.48"), 1750694520571150)
        self.assertEqual(level_weight("bid", Decimal("0.4800")), 1750694520571150)  # canonical text
        book = OrderBook.from_snapshot([SnapshotRow(_dt(T0), "bid", Decimal("0.48"), Decimal("150"))])
        self.assertEqual(book.digest(), "1894132580178927783")
        self.assertEqual(OrderBook().digest(), "0")

    def test_a_book_after_deltas_has_the_digest_of_the_same_book_loaded_whole_and_one_unit_changes_it(self) -> None:
        rng = random.Random(7)
        for _ in range(30):
            levels = {("bid", Decimal(f"0.{10 + i}")): Decimal(rng.randint(1, 10**6)) / 1000 for i in range(5)}
            levels.update({("ask", Decimal(f"0.{60 + i}")): Decimal(rng.randint(1, 10**6)) / 1000 for i in range(5)})
            book = OrderBook.from_snapshot([SnapshotRow(_dt(T0), s, p, q) for (s, p), q in levels.items()])
            for seq in range(1, 100):
                side = rng.choice(["bid", "ask"])
                price = Decimal(f"0.{rng.randint(10, 49) if side == 'bid' else rng.randint(60, 99)}")
                held = levels.get((side, price), Decimal(0))
                change = -held if held and rng.random() < 0.2 else Decimal(rng.randint(1, 10**9)) / 10**9
                book.apply(DeltaRow(_dt(T0 + seq), seq, side, price, change))
                if held + change:
                    levels[(side, price)] = held + change
                else:
                    levels.pop((side, price), None)
            whole = OrderBook.from_snapshot([SnapshotRow(_dt(T0 + 1000), s, p, q) for (s, p), q in levels.items()])
            self.assertEqual(book.digest(), whole.digest())
            (s0, p0), q0 = next(iter(levels.items()))
            self.assertNotEqual(
                book_digest([(s0, p0, q0 + Decimal("1E-18"))] + [(s, p, q) for (s, p), q in levels.items() if (s, p) != (s0, p0)]),
                book.digest(),
            )
        self.assertTrue(0 <= int(book.digest()) < DIGEST_MODULUS)


class ReplayByDigestTest(unittest.TestCase):
    def replay(self, history: FakeHistory) -> list:
        client = HistoryClient(history.url)
        try:
            return [(type(e).__name__, getattr(e, "ts", None)) for e in client.replay("venue_b", "KXT", T0, LAST)]
        finally:
            client.close()

    def test_the_later_snapshots_are_checked_by_their_digests_and_by_their_rows_without_them(self) -> None:
        events = {}
        for digests in (True, False):
            history = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS, digests=digests)
            try:
                events[digests] = self.replay(history)
                formats = [r.q("format") for r in history.server.requests if r.path.startswith("/api/venue_b/snapshots/")]
            finally:
                history.close()
            # With digests: one digest stream for the later snapshots, rows only to start and for the book a gap
            # restarts from; without: the digests refused, then the later snapshots' rows.
            self.assertEqual(formats.count("digest"), 1)
            # Rows twice either way: the starting book, and (with digests) the book the first gap restarts from or
            # (without) the later snapshots.
            self.assertEqual(formats.count("ndjson"), 2)
        self.assertEqual(events[True], events[False])
        self.assertIn(("SnapshotEvent", _dt(T0 + 100)), events[True])

    def test_digest_pages_are_followed_and_a_later_page_refused_mid_deploy_hands_over_to_the_rows(self) -> None:
        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        asked = []

        def refusing(req: Request) -> Reply:
            if req.q("format") == "digest":
                asked.append("cursor" if req.q("cursor") else "start")
                if req.q("cursor"):
                    return Reply.json({"error": "invalid_format", "message": "format must be json, ndjson, csv or parquet"}, 400)
            return real.handle(req)

        server = Server(refusing)
        client = HistoryClient(server.url)
        try:
            direct = HistoryClient(real.url)
            expected = [(type(e).__name__, getattr(e, "ts", None)) for e in direct.replay("venue_b", "KXT", T0, LAST, page_size=3)]
            direct.close()
            got = [(type(e).__name__, getattr(e, "ts", None)) for e in client.replay("venue_b", "KXT", T0, LAST, page_size=3)]
            self.assertEqual(got, expected)
            self.assertEqual(asked, ["start", "cursor"])
            self.assertIn(("SnapshotEvent", _dt(T0 + 100)), got)
        finally:
            client.close()
            server.close()
            real.close()

    def test_a_recorded_book_that_differs_is_snapshot_mismatch_by_digest_and_by_rows(self) -> None:
        for change in ("100.000000000000000001", "5.5"):
            wrong = [dict(s) for s in SNAPSHOTS_ROWS]
            wrong[5]["quantity"] = change  # the T0+100 book's 0.49 bid
            for digests in (True, False):
                history = FakeHistory(wrong, DELTA_ROWS, GAPS, digests=digests)
                try:
                    with self.assertRaises(BookError) as caught:
                        self.replay(history)
                    self.assertEqual((caught.exception.code, caught.exception.ts), ("snapshot_mismatch", _dt(T0 + 100)))
                finally:
                    history.close()
        # A level missing: another number of levels.
        missing = [s for i, s in enumerate(SNAPSHOTS_ROWS) if i != 5]
        history = FakeHistory(missing, DELTA_ROWS, GAPS)
        try:
            with self.assertRaises(BookError) as caught:
                self.replay(history)
            self.assertEqual((caught.exception.code, caught.exception.ts), ("snapshot_mismatch", _dt(T0 + 100)))
        finally:
            history.close()

    def test_the_book_a_gap_restarts_from_is_read_as_rows_and_checked_against_its_digest(self) -> None:
        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        restart = _dt(T0 + 200).isoformat(timespec="milliseconds").replace("+00:00", "Z")

        def spoiled(req: Request) -> Reply:
            reply = real.handle(req)
            if req.q("format") != "digest":
                return reply
            # The T0+200 book (a gap ends there) with another digest: its rows, read for the restart, disagree.
            body = b"".join(reply.chunks).decode()
            lines = [l if restart not in l else re.sub(r'"digest":"[0-9]+"', '"digest":"1"', l) for l in body.split("\n")]
            return Reply(200, {"Content-Type": "application/x-ndjson"}, ["\n".join(lines).encode()])

        server = Server(spoiled)
        client = HistoryClient(server.url)
        try:
            with self.assertRaises(BookError) as caught:
                list(client.replay("venue_b", "KXT", T0, LAST))
            self.assertEqual((caught.exception.code, caught.exception.ts), ("snapshot_mismatch", _dt(T0 + 200)))
        finally:
            client.close()
            server.close()
            real.close()

    def test_a_cut_or_malformed_digest_stream_is_a_data_error(self) -> None:
        real = FakeHistory(SNAPSHOTS_ROWS, DELTA_ROWS, GAPS)
        cases = [
            ('{"ts":"TS","levels":3,"digest":"1"}\n{"ts":"TS","lev', "stream_cut"),
            ("", "stream_cut"),
            ('{"type":"end","count":2,"next_cursor":null}\n', "stream_cut"),
            ('{"ts":"TS","levels":3,"digest":"0x12"}\n', "malformed_row"),
            ('{"ts":"TS","levels":-1,"digest":"12"}\n', "malformed_row"),
        ]
        try:
            for body, code in cases:
                def handle(req: Request, body: str = body) -> Reply:
                    if req.q("format") != "digest":
                        return real.handle(req)
                    text = body.replace("TS", "2026-03-26T14:00:00.100Z")
                    return Reply(200, {"Content-Type": "application/x-ndjson"}, [text.encode()])

                server = Server(handle)
                client = HistoryClient(server.url)
                try:
                    with self.subTest(body=body), self.assertRaises(DataError) as caught:
                        list(client.replay("venue_b", "KXT", T0, LAST))
                    self.assertEqual(caught.exception.code, code)
                finally:
                    client.close()
                    server.close()
        finally:
            real.close()


if __name__ == "__main__":
    unittest.main()
