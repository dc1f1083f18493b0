"""Rebuilds recorded books with the Python client and checks them, exactly, against the venue simulator's own book at
random moments, for every recorded exchange of a running stack — the Python twin of
packages/client/examples/sim-check.mts. Prints the counts; exits 1 on any mismatch.

    ./dev up --sim
    set -a; eval "$(./dev env)"; set +a
    export API_KEY=$(./dev keys create --name sim-check --requests-per-minute 1000000 | tail -n 1)
    python3 clients/python/examples/sim_check.py [--moments 1000] [--seed 1] [--report FILE]

For each exchange it draws ``--moments`` moments, each on a random recorded ticker, between the later of the
ticker's first recorded snapshot, the end of its generated history (the ``seed_end`` gap) and the oldest moment
the simulator still remembers (plus 5 s), and 3 s ago (what the recorder may still be writing); and adds the edges
of every recorded gap in those windows (its start, middle, last millisecond and end). Then:

- ``HistoryClient.books_at`` gives the book at every moment of a ticker in one pass (rule 7 here: the latest snapshot,
  then every delta, every later snapshot checked against the replayed book, gaps reported); each book must equal
  the simulator's book at that moment (``GET /control/books/{exchange}/{ticker}?at=``), by value. Gemini
  (``venue_c``) has no event times: the recorder stamps what it receives, so a moment within a network delay after
  simulator events sees the book before them; such moments are compared with the simulator's book just before
  each of the events of the 250 ms before the moment, and counted apart. A moment in a recorded gap has no book;
  the service's book endpoint must say ``in_gap`` there too.
- For a sample of moments (``--rebuild``, default 20 per exchange) ``HistoryClient.rebuild`` must give the same book
  as ``books_at``, and the service's own book (``HistoryClient.book``) the same levels and checksum.

Needs the simulator (SIM_URL), the history service (HISTORY_URL) and a key with room for a few thousand requests a
minute (API_KEY). ``--report FILE`` writes the counts and the rebuilt sample (levels and checksums) as JSON: the
repository's integration test (services/history/src/order-books/python-client.int.test.ts) runs this check on a
recording it makes and has the TypeScript client rebuild the same sample.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from depthgate import EXCHANGES, BookError, HistoryClient, canonical  # noqa: E402
from depthgate.http import Transport  # noqa: E402
from depthgate.timestamps import format_timestamp, from_ms, to_ms  # noqa: E402

Levels = List[Tuple[str, str]]
Book = Tuple[Levels, Levels]


def levels_of(pairs: Sequence[Any], bids: bool) -> Levels:
    """Levels by value, best first, in canonical text; zero quantities dropped."""
    out = [(Decimal(p), Decimal(q)) for p, q in pairs]
    out = [(p, q) for p, q in out if q != 0]
    out.sort(key=lambda l: l[0], reverse=bids)
    return [(canonical(p), canonical(q)) for p, q in out]


@dataclass
class Moment:
    exchange: str
    ticker: str
    at: int
    edge: bool = False
    sim: Optional[Book] = None
    #: The simulator's books just before each event of the 250 ms before ``at`` (Gemini), latest first.
    before_events: List[Book] = field(default_factory=list)


@dataclass
class Counts:
    moments: int = 0
    gap_edges: int = 0
    in_gaps: int = 0
    equal: int = 0
    equal_before_in_flight: int = 0
    mismatches: int = 0
    rebuilt: int = 0


@dataclass
class Result:
    seed: int
    counts: Dict[str, Counts]
    problems: List[str]
    #: The rebuilt sample: exchange, ticker, at (epoch ms), and either in_gap or the levels and checksum.
    rebuilt: List[Dict[str, Any]]
    seconds: float

    def table(self) -> str:
        lines = [
            f"seed {self.seed}; {self.seconds:.1f} s",
            "exchange     moments  gap edges  in gaps  = simulator  = simulator before in-flight events  rebuilt  mismatches",
        ]
        for exchange, c in self.counts.items():
            lines.append(
                f"{exchange:<11}{c.moments:>9}{c.gap_edges:>11}{c.in_gaps:>9}{c.equal:>13}"
                f"{c.equal_before_in_flight:>37}{c.rebuilt:>9}{c.mismatches:>12}"
            )
        lines += [f"  {p}" for p in self.problems[:20]]
        return "\n".join(lines)


class Simulator:
    """The simulator's control API."""

    def __init__(self, url: str) -> None:
        self.http = Transport(url, retries=0)

    def get(self, path: str) -> Any:
        return json.loads(self.http.request(path).text())

    def book_at(self, exchange: str, ticker: str, at: int) -> Book:
        b = self.get(f"/control/books/{exchange}/{quote(ticker, safe='')}?at={at}")
        return levels_of(b["bids"], True), levels_of(b["asks"], False)


def run(
    history_url: str,
    sim_url: str,
    api_key: str,
    *,
    moments: int = 1000,
    seed: int = 1,
    end_ms: Optional[int] = None,
    margin_ms: int = 5000,
    rebuild: int = 20,
    threads: int = 8,
) -> Result:
    started = time.monotonic()
    rng = random.Random(seed)
    history = HistoryClient(history_url, api_key=api_key)
    sim = Simulator(sim_url)
    recorded: Dict[str, List[str]] = sim.get("/control/tickers")
    end = end_ms if end_ms is not None else int(time.time() * 1000) - 3000
    exchanges = [e["key"] for e in EXCHANGES]
    counts = {e: Counts() for e in exchanges}
    problems: List[str] = []
    checked: List[Moment] = []
    events: Dict[Tuple[str, str], List[int]] = {}
    for exchange in exchanges:
        windows = []
        for ticker in recorded.get(exchange, []):
            coverage = history.coverage(exchange, ticker)
            first = coverage.snapshots.first_ts
            if first is None:
                continue
            retained = [e["ts"] for e in sim.get(f"/control/books/{exchange}/{quote(ticker, safe='')}/events")["events"]]
            events[(exchange, ticker)] = retained
            seed_end = max([to_ms(g.to_ts) for g in coverage.gaps if g.reason == "seed_end"], default=0)
            start = max(to_ms(first), seed_end, (retained[0] + margin_ms) if retained else end)
            if end <= start:
                continue
            windows.append((ticker, start, end))
            for g in coverage.gaps:
                f, t = to_ms(g.from_ts), to_ms(g.to_ts)
                for at in (f, (f + t) // 2, t - 1, t):
                    if start <= at <= end:
                        checked.append(Moment(exchange, ticker, at, edge=True))
                        counts[exchange].gap_edges += 1
        if not windows:
            raise RuntimeError(f"{exchange}: nothing recorded inside the simulator's memory yet")
        for _ in range(moments):
            ticker, start, stop = windows[rng.randrange(len(windows))]
            checked.append(Moment(exchange, ticker, start + rng.randrange(stop - start + 1)))
            counts[exchange].moments += 1

    # The simulator forgets: read its books first.
    def read_sim(m: Moment) -> None:
        m.sim = sim.book_at(m.exchange, m.ticker, m.at)
        if m.exchange == "venue_c":
            near = [t for t in events.get((m.exchange, m.ticker), []) if m.at - 250 < t <= m.at]
            m.before_events = [sim.book_at(m.exchange, m.ticker, t - 1) for t in reversed(near)]

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(read_sim, checked))

    by_ticker: Dict[Tuple[str, str], List[Moment]] = {}
    for m in checked:
        by_ticker.setdefault((m.exchange, m.ticker), []).append(m)
    mine: Dict[Tuple[str, str, int], Optional[Book]] = {}
    for (exchange, ticker), ms in by_ticker.items():
        for b in history.books_at(exchange, ticker, [m.at for m in ms]):
            key = (exchange, ticker, to_ms(b.at))
            mine[key] = None if b.book is None else (levels_of(b.book.bids(), True), levels_of(b.book.asks(), False))
    for m in checked:
        c = counts[m.exchange]
        where = f"{m.exchange} {m.ticker} at {format_timestamp(from_ms(m.at))} ({m.at})"
        book = mine[(m.exchange, m.ticker, m.at)]
        if book is None:
            service = history.book(m.exchange, m.ticker, at=m.at)
            if service.status == "in_gap":
                c.in_gaps += 1
            else:
                c.mismatches += 1
                problems.append(f"{where}: the client says in_gap, the service {service.status}")
        elif book == m.sim:
            c.equal += 1
        elif any(book == b for b in m.before_events):
            c.equal_before_in_flight += 1
        else:
            c.mismatches += 1
            problems.append(f"{where}: client {book} ≠ simulator {m.sim}")

    # rebuild() on a sample, against books_at and the service's own book.
    rebuilt: List[Dict[str, Any]] = []
    for exchange in exchanges:
        sample = [m for m in checked if m.exchange == exchange and not m.edge][:rebuild]
        sample += [m for m in checked if m.exchange == exchange and m.edge and mine[(m.exchange, m.ticker, m.at)] is None][:2]
        for m in sample:
            where = f"{m.exchange} {m.ticker} at {format_timestamp(from_ms(m.at))}"
            entry: Dict[str, Any] = {"exchange": m.exchange, "ticker": m.ticker, "at": m.at}
            service = history.book(m.exchange, m.ticker, at=m.at)
            try:
                book = history.rebuild(m.exchange, m.ticker, m.at)
            except BookError as err:
                if err.code != "in_gap":
                    raise
                entry["in_gap"] = True
                if service.status != "in_gap" or mine[(m.exchange, m.ticker, m.at)] is not None:
                    counts[exchange].mismatches += 1
                    problems.append(f"{where}: rebuild says in_gap, the service {service.status}")
                rebuilt.append(entry)
                counts[exchange].rebuilt += 1
                continue
            levels = (levels_of(book.bids(), True), levels_of(book.asks(), False))
            ok = (
                service.status == "ok"
                and levels == mine[(m.exchange, m.ticker, m.at)]
                and service.bids is not None
                and service.asks is not None
                and levels == (levels_of(service.bids, True), levels_of(service.asks, False))
                and book.checksum() == service.checksum()
            )
            if not ok:
                counts[exchange].mismatches += 1
                problems.append(f"{where}: rebuild {levels} ≠ books_at {mine[(m.exchange, m.ticker, m.at)]} or the service {service}")
            entry.update(checksum=book.checksum(), bids=levels[0], asks=levels[1])
            rebuilt.append(entry)
            counts[exchange].rebuilt += 1
    history.close()
    return Result(seed, counts, problems, rebuilt, time.monotonic() - started)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moments", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rebuild", type=int, default=20, help="rebuild() checks per exchange")
    parser.add_argument("--end", type=int, help="the last moment (epoch ms; default: 3 s ago)")
    parser.add_argument("--report", help="write the counts and the rebuilt sample as JSON to this file")
    args = parser.parse_args(argv)
    env = {name: os.environ.get(name) for name in ("HISTORY_URL", "SIM_URL", "API_KEY")}
    missing = [n for n, v in env.items() if not v]
    if missing:
        parser.error(f"{', '.join(missing)} not set: see the usage at the top of this file")
    result = run(
        env["HISTORY_URL"] or "",
        env["SIM_URL"] or "",
        env["API_KEY"] or "",
        moments=args.moments,
        seed=args.seed,
        end_ms=args.end,
        rebuild=args.rebuild,
    )
    print(result.table())
    if args.report:
        Path(args.report).write_text(json.dumps(asdict(result), indent=1))
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
