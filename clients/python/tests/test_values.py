"""Decimals, timestamps and rows: what is accepted, what it becomes, and what is refused (with which error)."""

import importlib.util
import unittest
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from depthgate.decimals import EXACT, canonical, normalize, parse_decimal, to_decimal
from depthgate.errors import DataError, InvalidArgumentError
from depthgate.rows import DELTAS, SNAPSHOTS, TRADES, DeltaRow, EndLine, Gap, SnapshotRow, TradeRow, Where, parse_bar, parse_line
from depthgate.timestamps import EPOCH, format_timestamp, moment, parse_ms, parse_timestamp, to_ms

UTC = timezone.utc


class DecimalsTest(unittest.TestCase):
    def test_plain_notation_only(self) -> None:
        self.assertEqual(parse_decimal("0.48"), Decimal("0.48"))
        self.assertEqual(parse_decimal("-150"), Decimal(-150))
        self.assertEqual(parse_decimal("007.50"), Decimal("7.5"))
        for bad in ("1e3", "+1", " 1", "1 ", ".5", "5.", "", "NaN", "Infinity", "1_000", "0x10", "--1", "1.2.3"):
            with self.subTest(bad=bad), self.assertRaises(DataError) as caught:
                parse_decimal(bad)
            self.assertEqual(caught.exception.code, "invalid_decimal")
        with self.assertRaises(DataError):
            to_decimal(0.1)  # type: ignore[arg-type]  # a float is not exact
        with self.assertRaises(DataError):
            to_decimal(Decimal("NaN"))
        self.assertEqual(to_decimal(7), Decimal(7))

    def test_canonical_text_is_the_services(self) -> None:
        cases = {
            "0.4800": "0.48",
            "150.00": "150",
            "0": "0",
            "-0": "0",
            "-0.000": "0",
            "00.5": "0.5",
            "-0.50": "-0.5",
            "100": "100",
            "0.000000000000000001": "0.000000000000000001",
            "12345678901234567890.123456789012345678": "12345678901234567890.123456789012345678",
        }
        for text, want in cases.items():
            with self.subTest(text=text):
                self.assertEqual(canonical(text), want)
                self.assertEqual(canonical(Decimal(text)), want)
        # Values whose str() uses an exponent print without one.
        self.assertEqual(canonical(Decimal("1E+2")), "100")
        self.assertEqual(canonical(Decimal("1.2E-7")), "0.00000012")
        self.assertEqual(canonical(Decimal("-5E-1")), "-0.5")

    def test_normalize_drops_trailing_zeros_without_an_exponent(self) -> None:
        self.assertEqual(str(normalize(Decimal("1.50"))), "1.5")
        self.assertEqual(str(normalize(Decimal("1E+2"))), "100")
        self.assertEqual(str(normalize(Decimal("-0.0"))), "0")
        self.assertEqual(str(normalize(Decimal("100"))), "100")
        self.assertEqual(str(normalize(Decimal("10.00"))), "10")

    def test_exact_arithmetic_raises_instead_of_rounding(self) -> None:
        a = Decimal("99999999999999999999.999999999999999999")
        b = Decimal("0.000000000000000001")
        # Python's default context (28 digits) would round this sum; EXACT holds it.
        self.assertEqual(EXACT.add(a, b), Decimal("100000000000000000000"))
        self.assertEqual(canonical(EXACT.add(Decimal("0.1"), Decimal("0.2"))), "0.3")
        with self.assertRaises(Exception):
            EXACT.add(Decimal("1" + "0" * 120), Decimal("1"))


class TimestampsTest(unittest.TestCase):
    def test_rfc3339_forms(self) -> None:
        self.assertEqual(parse_ms("1970-01-01T00:00:00Z"), 0)
        self.assertEqual(parse_ms("2026-03-26T14:00:01.193Z"), 1_774_533_601_193)
        self.assertEqual(parse_ms("2026-03-26T16:00:01.193+02:00"), 1_774_533_601_193)
        self.assertEqual(parse_ms("2026-03-26 14:00:01.1939999z"), 1_774_533_601_193)  # sub-ms dropped
        # More than 9 fraction digits (RFC 3339 sets no limit).
        self.assertEqual(parse_ms("2026-03-26T14:00:01.1934567891Z"), 1_774_533_601_193)
        self.assertEqual(parse_ms("2026-03-26T14:00:01." + "0" * 400 + "Z"), 1_774_533_601_000)
        self.assertEqual(parse_ms("2024-02-29T00:00:00Z"), 1_709_164_800_000)
        # A leap second is the next minute's first, as the service reads it (and the TypeScript client).
        self.assertEqual(parse_ms("2026-12-31T23:59:60Z"), parse_ms("2027-01-01T00:00:00Z"))
        self.assertEqual(parse_ms("2027-01-01T00:59:60.250+01:00"), parse_ms("2027-01-01T00:00:00.250Z"))
        self.assertEqual(moment("2026-12-31T23:59:60.5Z"), datetime(2027, 1, 1, 0, 0, 0, 500000, tzinfo=UTC))
        for bad in ("2026-02-30T00:00:00Z", "2026-03-26", "2026-03-26T14:00:01", "1774533601193", "2026-13-01T00:00:00Z",
                    "2026-03-26T24:00:00Z", "2026-03-26T14:00:61Z", "2026-03-26T14:60:00Z", "2026-03-26T14:00:00+24:00",
                    "2023-02-29T00:00:00Z"):
            with self.subTest(bad=bad):
                self.assertIsNone(parse_ms(bad))
                self.assertIsNone(parse_timestamp(bad))

    def test_datetimes_are_utc_aware_and_format_back(self) -> None:
        dt = parse_timestamp("2026-03-26T14:00:01.193Z")
        assert dt is not None
        self.assertEqual(dt, datetime(2026, 3, 26, 14, 0, 1, 193000, tzinfo=UTC))
        self.assertEqual(dt.utcoffset(), timedelta(0))
        self.assertEqual(format_timestamp(dt), "2026-03-26T14:00:01.193Z")
        self.assertEqual(format_timestamp(datetime(2026, 3, 26, 16, 0, 0, tzinfo=timezone(timedelta(hours=2)))), "2026-03-26T14:00:00.000Z")

    def test_moments(self) -> None:
        want = datetime(2026, 3, 26, 14, 0, 1, 193000, tzinfo=UTC)
        self.assertEqual(moment(1_774_533_601_193), want)
        self.assertEqual(moment("2026-03-26T14:00:01.193Z"), want)
        self.assertEqual(moment("1774533601193"), want)  # epoch ms as text, as the history API takes it
        self.assertEqual(moment("2026-03-26T14:00:01.1930000000Z"), want)
        self.assertEqual(moment(datetime(2026, 3, 26, 14, 0, 1, 193999, tzinfo=UTC)), want)
        self.assertEqual(to_ms(want), 1_774_533_601_193)
        for bad in (datetime(2026, 3, 26), 1.7e12, True, "yesterday", "2026-03-26", -1, None, "1774533601", "-1774533601193", "1774533601193.5", "01774533601193", "１７７４５３３６０１１９３", "２０２６-03-26T14:00:01Z"):
            with self.subTest(bad=bad), self.assertRaises(InvalidArgumentError) as caught:
                moment(bad)  # type: ignore[arg-type]
            self.assertEqual(caught.exception.code, "invalid_argument")

    def test_every_form_of_a_moment_is_refused_outside_the_years_1970_to_9999_as_the_typescript_client(self) -> None:
        east = timezone(timedelta(hours=1))
        for bad in (datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), datetime(1970, 1, 1, 0, 30, tzinfo=east),
                    datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-1))), "1969-12-31T23:59:59.999Z",
                    "1970-01-01T00:30:00+01:00", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999-00:01", -1):
            with self.subTest(bad=bad), self.assertRaises(InvalidArgumentError):
                moment(bad)
        self.assertEqual(moment(datetime(1970, 1, 1, 1, tzinfo=east)), EPOCH)
        self.assertEqual(moment("1970-01-01T01:00:00+01:00"), EPOCH)

    def test_sub_milliseconds_round_as_the_service_rounds_them_a_start_up_an_end_down(self) -> None:
        want = datetime(2026, 3, 26, 14, 0, 1, 193000, tzinfo=UTC)
        later = want + timedelta(milliseconds=1)
        for m in ("2026-03-26T14:00:01.1930001Z", "2026-03-26T15:00:01.1935+01:00", "2026-03-26T14:00:01.193" + "0" * 400 + "1Z",
                  datetime(2026, 3, 26, 14, 0, 1, 193001, tzinfo=UTC)):
            with self.subTest(m=m):
                self.assertEqual((moment(m, "start", "ceil"), moment(m, "end", "floor"), moment(m)), (later, want, want))
        # Nothing past the millisecond: nothing to round.
        for m in ("2026-03-26T14:00:01.193Z", "2026-03-26T14:00:01.1930000Z", "1774533601193", 1_774_533_601_193, want):
            with self.subTest(m=m):
                self.assertEqual(moment(m, "start", "ceil"), want)
        self.assertEqual(parse_ms("2026-03-26T14:00:01.9995Z", "ceil"), 1_774_533_602_000)
        with self.assertRaises(InvalidArgumentError):
            moment(datetime.max.replace(tzinfo=UTC), "start", "ceil")

    @unittest.skipUnless(importlib.util.find_spec("pandas"), "pandas is not installed")
    def test_a_pandas_timestamps_nanoseconds_round_like_any_sub_milliseconds(self) -> None:
        import pandas

        ts = pandas.Timestamp("2026-03-26T14:00:01.193000001Z")
        want = datetime(2026, 3, 26, 14, 0, 1, 193000, tzinfo=UTC)
        self.assertEqual((moment(ts, "start", "ceil"), moment(ts)), (want + timedelta(milliseconds=1), want))


class RowsTest(unittest.TestCase):
    def test_rows_lines_markers_and_the_end_line(self) -> None:
        w = Where("GET http://x/api", "rid", 3)
        d = parse_line(DELTAS, '{"ts":"2026-03-26T14:00:01.193Z","sequence":10,"side":"bid","price":"0.48","quantity_delta":"-150"}', w)
        self.assertEqual(d, DeltaRow(parse_timestamp("2026-03-26T14:00:01.193Z"), 10, "bid", Decimal("0.48"), Decimal("-150")))
        s = parse_line(SNAPSHOTS, '{"side":"ask","ts":"2026-03-26T14:00:01.193Z","quantity":"20.25","price":"0.5","received_ts":"2026-03-26T14:00:01.200Z"}', w)
        assert isinstance(s, SnapshotRow)
        self.assertEqual((s.side, s.price, s.quantity), ("ask", Decimal("0.5"), Decimal("20.25")))
        self.assertEqual(s.received_ts, parse_timestamp("2026-03-26T14:00:01.200Z"))
        g = parse_line(DELTAS, '{"type":"gap","from_ts":"2026-03-26T14:00:00.000Z","to_ts":"2026-03-26T14:00:05.000Z","reason":"disconnect","detected_at":"2026-03-26T14:00:05.001Z"}', w)
        self.assertIsInstance(g, Gap)
        assert isinstance(g, Gap)
        self.assertEqual(g.reason, "disconnect")
        self.assertEqual(parse_line(DELTAS, '{"type":"end","count":2,"next_cursor":null}', w), EndLine(2, None))
        self.assertEqual(parse_line(DELTAS, '{"type":"end","count":0,"next_cursor":"abc"}', w), EndLine(0, "abc"))
        # Sequences beyond 2^53 stay exact (a JavaScript number could not hold them).
        big = parse_line(DELTAS, '{"ts":"2026-03-26T14:00:01.193Z","sequence":18014398509481985,"side":"ask","price":"1","quantity_delta":"1"}', w)
        assert isinstance(big, DeltaRow)
        self.assertEqual(big.sequence, 2**54 + 1)

    def test_trade_lines_and_bars_follow_the_documented_shapes(self) -> None:
        w = Where()
        t = parse_line(DELTAS, '{"type":"trade","ts":"2026-03-26T14:00:01.193Z","trade_id":"t-1","price":"0.48","size":"3","side":"buy"}', w)
        self.assertEqual(t, TradeRow(parse_timestamp("2026-03-26T14:00:01.193Z"), "t-1", Decimal("0.48"), Decimal(3), "buy"))
        t2 = parse_line(TRADES, '{"ts":"2026-03-26T14:00:01.193Z","trade_id":"h:ab","price":"0.5","size":"1.5","side":"sell","venue_side":"no","sequence":7}', w)
        assert isinstance(t2, TradeRow)
        self.assertEqual((t2.venue_side, t2.sequence), ("no", 7))
        bar = parse_bar({"ts": "2026-03-26T14:00:00.000Z", "open": "0.4", "high": "0.5", "low": "0.39", "close": "0.45", "volume": "120", "vwap": "0.4425", "trades": 9}, w)
        self.assertEqual((bar.high, bar.trades), (Decimal("0.5"), 9))
        with self.assertRaises(DataError):
            parse_line(TRADES, '{"ts":"2026-03-26T14:00:01.193Z","trade_id":"x","price":"0.5","size":"1","side":"bid"}', w)

    def test_malformed_rows_name_the_line(self) -> None:
        base = {"ts": "2026-03-26T14:00:01.193Z", "sequence": 1, "side": "bid", "price": "0.48", "quantity_delta": "1"}
        import json

        broken = {
            "ts": {**base, "ts": "2026-03-26"},
            "sequence": {**base, "sequence": -1},
            "sequence is a bool": {**base, "sequence": True},
            "sequence is text": {**base, "sequence": "1"},
            "side": {**base, "side": "buy"},
            "price": {**base, "price": 0.48},
            "quantity_delta": {**base, "quantity_delta": "1e3"},
            "missing": {k: v for k, v in base.items() if k != "price"},
        }
        for name, row in broken.items():
            with self.subTest(name=name), self.assertRaises(DataError) as caught:
                parse_line(DELTAS, json.dumps(row), Where("GET u", "r", 12))
            self.assertEqual(caught.exception.code, "malformed_row")
            self.assertEqual(caught.exception.line, 12)
            self.assertIn("line 12", str(caught.exception))
        for line in ("not json", "[1,2]", '{"type":"other"}', '{"type":"end","count":"2","next_cursor":null}'):
            with self.subTest(line=line), self.assertRaises(DataError) as caught:
                parse_line(DELTAS, line, Where(line=1))
            self.assertEqual(caught.exception.code, "malformed_row")


if __name__ == "__main__":
    unittest.main()
