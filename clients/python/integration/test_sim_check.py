"""The sim check (examples/sim_check.py) as a test: 1,000 random moments per recorded exchange, and the edges of
every recorded gap, where the book the Python client rebuilds from the history API must equal the venue simulator's
book at that moment, and the service must agree where there is no book.

It needs a recording: services/history/src/order-books/python-client.int.test.ts (part of `./dev test`) starts the
simulator, the recorder and the history service, records, cuts every feed once (so gaps are recorded), and runs
this module with HISTORY_URL, SIM_URL, API_KEY, DG_SIM_CHECK_END (the last moment to check, epoch ms) and
DG_SIM_CHECK_REPORT (where to write the counts and the rebuilt sample, which the TypeScript client then rebuilds
too). Against `./dev up --sim`, run examples/sim_check.py instead.
"""

import json
import os
import sys
import unittest
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import sim_check  # noqa: E402

MOMENTS = 1000


class SimCheckTest(unittest.TestCase):
    def test_the_rebuilt_books_equal_the_simulators(self) -> None:
        names = ("HISTORY_URL", "SIM_URL", "API_KEY", "DG_SIM_CHECK_END")
        missing = [n for n in names if not os.environ.get(n)]
        self.assertEqual(missing, [], "run by python-client.int.test.ts (./dev test); see this module's docstring")
        result = sim_check.run(
            os.environ["HISTORY_URL"],
            os.environ["SIM_URL"],
            os.environ["API_KEY"],
            moments=MOMENTS,
            seed=int(os.environ.get("DG_SIM_CHECK_SEED", "1")),
            end_ms=int(os.environ["DG_SIM_CHECK_END"]),
            margin_ms=0,
            rebuild=10,
        )
        print(result.table())
        report = os.environ.get("DG_SIM_CHECK_REPORT")
        if report:
            Path(report).write_text(json.dumps(asdict(result)))
        self.assertEqual(result.problems, [])
        for exchange, c in result.counts.items():
            with self.subTest(exchange=exchange):
                self.assertEqual(c.moments, MOMENTS)
                self.assertEqual(c.mismatches, 0)
                self.assertEqual(c.equal + c.equal_before_in_flight + c.in_gaps, c.moments + c.gap_edges)
                # Every feed was cut once: each exchange has gaps, and moments inside them had no book.
                self.assertGreater(c.gap_edges, 0)
                self.assertGreater(c.in_gaps, 0)
                self.assertGreater(c.equal, MOMENTS // 2)
                self.assertGreaterEqual(c.rebuilt, 10)


if __name__ == "__main__":
    unittest.main()
