"""The worked backtest (examples/backtest.py) on the recording the integration test made (see test_sim_check.py):
it replays each Kalshi ticker's recorded range, across the recorded gap, and prints its fills, inventory and P&L."""

import contextlib
import io
import os
import re
import runpy
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import backtest  # noqa: E402
from depthgate import HistoryClient  # noqa: E402
from depthgate.timestamps import format_timestamp, from_ms  # noqa: E402


class BacktestTest(unittest.TestCase):
    def test_runs_over_the_recorded_books(self) -> None:
        missing = [n for n in ("HISTORY_URL", "API_KEY", "DG_SIM_CHECK_END") if not os.environ.get(n)]
        self.assertEqual(missing, [], "run by python-client.int.test.ts (./dev test); see test_sim_check.py")
        end = format_timestamp(from_ms(int(os.environ["DG_SIM_CHECK_END"])))
        history = HistoryClient(os.environ["HISTORY_URL"], api_key=os.environ["API_KEY"])
        books = 0
        for ticker in history.tickers("venue_b"):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = backtest.main(["--exchange", "venue_b", "--ticker", ticker, "--end", end, "--minutes", "10"])
            text = out.getvalue()
            self.assertEqual(code, 0, text)
            summary = re.search(r"^(\d+) books, (\d+) quotes placed, (\d+) fills$", text, re.M)
            assert summary is not None, text
            self.assertRegex(text, r"inventory -?[0-9.]+, cash -?[0-9.]+, P&L -?[0-9.]+ \(marked at mid [0-9.]+\)")
            books += int(summary.group(1))
            self.assertGreater(int(summary.group(2)), 0, text)
        self.assertGreater(books, 20)


    def test_the_walkthrough_runs_cell_by_cell(self) -> None:
        env = os.environ.get("DG_SIM_CHECK_END")
        self.assertTrue(env, "run by python-client.int.test.ts (./dev test)")
        os.environ["WALKTHROUGH_END"] = env or ""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "walkthrough.py"), run_name="__main__")
        text = out.getvalue()
        self.assertRegex(text, r"books \d+ quotes placed \d+ inventory -?[0-9.]+ cash -?[0-9.]+ P&L (-?[0-9.]+|-)")
        self.assertIn("microprice", text)


if __name__ == "__main__":
    unittest.main()
