"""The README's examples (clients/python/README.md), runnable against ``./dev up --sim``:

    set -a; eval "$(./dev env)"; set +a
    python3 clients/python/examples/quickstart.py

(HISTORY_URL, GATEWAY_URL and DEMO_API_KEY come from ``./dev env``.)
"""

import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from depthgate import BookError, Gap, GatewayClient, HistoryClient, HttpError  # noqa: E402
from depthgate.replay import BookEvent, GapEvent  # noqa: E402

api_key = os.environ.get("DEMO_API_KEY")
history = HistoryClient(os.environ.get("HISTORY_URL", "http://127.0.0.1:7081"), api_key=api_key)
gateway = GatewayClient(os.environ.get("GATEWAY_URL", "http://127.0.0.1:7080"), api_key=api_key)
now = datetime.now(timezone.utc)

# Tickers with data in your window, and what is recorded for one of them.
ticker = history.tickers("venue_b", prefix="KXBTCD")[0]
coverage = history.coverage("venue_b", ticker)
print(ticker, "deltas", coverage.deltas.rows, "first", coverage.deltas.first_ts, "gaps", len(coverage.gaps))
first = coverage.snapshots.first_ts or now  # nothing before the first recorded book

# Every delta of the last minute: the NDJSON stream read line by line (cursors followed for you).
n = 0
for d in history.deltas("venue_b", ticker, start=now - timedelta(minutes=1), gaps=True):
    if isinstance(d, Gap):
        print("gap", d.reason, d.from_ts, d.to_ts)  # recorded gaps come among the rows, never dropped
        continue
    if n < 3:
        print(d.ts, d.sequence, d.side, d.price, d.quantity_delta)  # datetime, int, str, Decimal, Decimal
    n += 1
print(n, "deltas in the last minute")

# The book 10 s ago, rebuilt here by rule 7, and the service's own: the same levels and checksum.
at = now - timedelta(seconds=10)
try:
    book = history.rebuild("venue_b", ticker, at)
    service = history.book("venue_b", ticker, at=at, depth=5)
    print("best", book.best(), "spread", book.spread(), "mid", book.mid())
    print("checksums", book.checksum(5), service.checksum(5))
except BookError as err:
    if err.code != "in_gap":
        raise
    print("10 s ago lies in a recorded gap")

# The book after every change of the last 30 s, gaps reported.
moments = 0
for event in history.replay("venue_b", ticker, max(first, now - timedelta(seconds=30))):
    if isinstance(event, BookEvent):
        moments += 1
    elif isinstance(event, GapEvent):
        print("gap", event.gap.reason, event.gap.from_ts, event.gap.to_ts)
print(moments, "moments replayed")

# The book once a second over the last minute, in one pass; and as pandas frames where pandas is installed.
seconds = [now - timedelta(seconds=s) for s in range(60, 0, -1)]
samples = history.books_at("venue_b", ticker, [t for t in seconds if t >= first])
print(sum(s.book is not None for s in samples), "of", len(samples), "moments have a book")
try:
    frame = history.deltas("venue_b", ticker, start=now - timedelta(minutes=1)).to_pandas()
    print(frame.groupby("side")["quantity_delta"].sum())
except ImportError as err:
    print(err)

# The gateway: a platform's resource, and an error with the upstream's status.
markets = gateway.call("kalshi", "markets", {"limit": 2, "status": "open"})
print("kalshi markets", len(markets.data["markets"]), "request id", markets.request_id, "cache", markets.cache)
try:
    gateway.call("kalshi", "markets/NO-SUCH-MARKET")
except HttpError as err:
    print("error", err.status, err.code, err.request_id)
