"""The checksum against the known answers the TypeScript client is checked against too
(packages/client/src/checksum-cases.json, read by packages/client/src/checksum-cases.test.ts): both clients give the
same text and CRC-32 for the same books."""

import json
import unittest
import zlib
from decimal import Decimal
from pathlib import Path

from depthgate import OrderBook, SnapshotRow, book_checksum, checksum_text
from depthgate.timestamps import parse_timestamp

CASES = Path(__file__).resolve().parents[3] / "packages" / "client" / "src" / "checksum-cases.json"


class SharedCasesTest(unittest.TestCase):
    cases: list

    @classmethod
    def setUpClass(cls) -> None:
        cls.cases = json.loads(CASES.read_text("utf-8"))["cases"]

    def test_the_file_holds_the_documented_example_and_random_books(self) -> None:
        self.assertEqual(self.cases[0]["text"], "0.48:150:0.5:20.25:0.47:100")
        self.assertEqual(self.cases[0]["checksum"], 1986237867)
        self.assertGreaterEqual(sum(c["name"].startswith("random") for c in self.cases), 20)

    def test_every_case_gives_the_same_text_and_checksum(self) -> None:
        ts = parse_timestamp("2026-03-26T14:00:01.193Z")
        assert ts is not None
        for c in self.cases:
            depth = 25 if c["depth"] is None else c["depth"]
            with self.subTest(case=c["name"]):
                # As text pairs, as Decimals, and as the service's {price, quantity} objects.
                self.assertEqual(checksum_text(c["bids"], c["asks"], depth), c["text"])
                self.assertEqual(book_checksum(c["bids"], c["asks"], depth), c["checksum"])
                decimals = lambda side: [(Decimal(p), Decimal(q)) for p, q in side]  # noqa: E731
                self.assertEqual(book_checksum(decimals(c["bids"]), decimals(c["asks"]), depth), c["checksum"])
                objects = lambda side: [{"price": p, "quantity": q} for p, q in side]  # noqa: E731
                self.assertEqual(book_checksum(objects(c["bids"]), objects(c["asks"]), depth), c["checksum"])
                self.assertEqual(zlib.crc32(c["text"].encode()), c["checksum"])
                if c["book"]:
                    rows = [SnapshotRow(ts, "bid", Decimal(p), Decimal(q)) for p, q in c["bids"]]
                    rows += [SnapshotRow(ts, "ask", Decimal(p), Decimal(q)) for p, q in c["asks"]]
                    book = OrderBook.from_snapshot(rows)
                    self.assertEqual(book.checksum(depth), c["checksum"])
                    if c["depth"] is None:
                        self.assertEqual(book.checksum(), c["checksum"])


if __name__ == "__main__":
    unittest.main()
