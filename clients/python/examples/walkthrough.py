# %% [markdown]
# # Backtesting a market maker on recorded books
#
# A notebook in Python's "percent" format (Jupyter with jupytext, VS Code and PyCharm open the `# %%` cells as a
# notebook; `python3 walkthrough.py` runs it whole). Against `./dev up --sim`:
#
#     set -a; eval "$(./dev env)"; set +a
#     python3 clients/python/examples/walkthrough.py
#
# Needs pandas. The strategy and its fill rules are examples/backtest.py's (its docstring states them).

# %%
import os
import sys
from decimal import Decimal
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # backtest.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # depthgate, from a checkout without installing

import backtest  # noqa: E402
from depthgate import HistoryClient, canonical  # noqa: E402

pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)

history = HistoryClient(
    os.environ.get("HISTORY_URL", "http://127.0.0.1:7081"),
    api_key=os.environ.get("API_KEY") or os.environ.get("DEMO_API_KEY"),
)
exchange = "venue_b"  # Kalshi; its books are the YES side: bids and asks of YES
ticker = os.environ.get("TICKER") or history.tickers(exchange)[0]
end = (
    pd.Timestamp(int(os.environ["WALKTHROUGH_END"]), unit="ms", tz="UTC").to_pydatetime()
    if os.environ.get("WALKTHROUGH_END")
    else datetime.now(timezone.utc) - timedelta(seconds=5)
)

# %% [markdown]
# ## 1. What was recorded, and where it was not
#
# Coverage says how many rows there are and lists every recorded gap: "no rows" over a stretch without a gap means
# nothing happened; a gap means nothing was recorded, and no book is given inside it.

# %%
coverage = history.coverage(exchange, ticker)
start = max(coverage.snapshots.first_ts or end, end - timedelta(minutes=10))
print(ticker, coverage.snapshots.rows, "snapshot rows,", coverage.deltas.rows, "deltas; from", start, "to", end)
gaps = pd.DataFrame(coverage.gaps, columns=["from_ts", "to_ts", "reason", "detected_at"])
print(gaps)

# %% [markdown]
# ## 2. The changes, as a frame
#
# Every delta of the range (the NDJSON stream, read as it arrives); prices and quantities stay exact `Decimal`s.

# %%
deltas = history.deltas(exchange, ticker, start=start, end=end, gaps=True).to_pandas()
print(deltas.tail())
print(deltas[deltas["type"] == "row"].groupby("side")["quantity_delta"].sum())

# %% [markdown]
# ## 3. The book once a second, and its microprice
#
# `books_at` rebuilds the book at each moment in one pass (rule 7: the latest snapshot, then the deltas; every
# recorded snapshot on the way checked). Moments inside a recorded gap come back with the gap and no book.

# %%
moments = pd.date_range(start.replace(microsecond=0) + timedelta(seconds=1), end, freq="1s")
rows = []
for s in history.books_at(exchange, ticker, moments):
    best = s.book.best() if s.book is not None else None
    rows.append(
        {
            "at": s.at,
            "bid": best.bid.price if best and best.bid else None,
            "ask": best.ask.price if best and best.ask else None,
            "microprice": backtest.microprice(s.book) if s.book is not None else None,
            "in_gap": s.gap is not None,
        }
    )
books = pd.DataFrame(rows).set_index("at")
print(books)

# %% [markdown]
# ## 4. The market maker
#
# Quotes around the microprice after each change of the book, filled when the other side reaches them
# (`fills="book"`; `fills="trades"` uses recorded trades and a queue position once the service serves them).

# %%
mm = backtest.run(history, exchange, ticker, start, end, params=backtest.Params(size=Decimal(10)))
fills = pd.DataFrame(mm.fills, columns=list(backtest.Fill._fields))
print(fills)
pnl = mm.pnl()
print("books", mm.books, "quotes placed", mm.requotes, "inventory", canonical(mm.inventory), "cash", canonical(mm.cash),
      "P&L", "-" if pnl is None else canonical(pnl))
