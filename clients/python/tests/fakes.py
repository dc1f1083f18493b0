"""Local HTTP servers for the unit tests (the transport's behaviour against real sockets, as the TypeScript client's
tests do): a scriptable server, and a small in-memory history service that answers the row and coverage endpoints
the way docs/history.md describes them (rows by ts, NDJSON with its end line, cursors, gap markers)."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from decimal import Decimal
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlsplit

from depthgate.digest import book_digest
from depthgate.timestamps import format_timestamp, from_ms, parse_ms


@dataclass
class Request:
    method: str
    path: str
    query: Dict[str, List[str]]
    headers: Dict[str, str]
    body: bytes

    def q(self, name: str) -> Optional[str]:
        v = self.query.get(name)
        return v[0] if v else None


@dataclass
class Reply:
    status: int = 200
    headers: Dict[str, str] = field(default_factory=dict)
    #: The body, in the pieces it is sent in (chunked transfer when more than one or ``chunked``).
    chunks: List[bytes] = field(default_factory=list)
    chunked: bool = False
    #: Close the connection before the last chunk (a cut body).
    cut: bool = False
    #: Seconds to wait before the headers / between chunks.
    delay: float = 0.0
    chunk_delay: float = 0.0
    gzip: bool = False
    #: Drop the connection without any answer.
    drop: bool = False

    @staticmethod
    def json(value: Any, status: int = 200, **kw: Any) -> "Reply":
        return Reply(status, {"Content-Type": "application/json; charset=utf-8", **kw.pop("headers", {})}, [json.dumps(value).encode()], **kw)


class Server:
    """A threaded HTTP/1.1 server on 127.0.0.1 whose answers come from ``handler(request)``; every request is kept."""

    def __init__(self, handler: Callable[[Request], Reply]) -> None:
        self.handler = handler
        self.requests: List[Request] = []
        self.connections = 0
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes: without this each answer would wait for a delayed ACK.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                outer.connections += 1

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(
                    self.command,
                    unquote(parts.path),
                    parse_qs(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                outer.requests.append(req)
                reply = outer.handler(req)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                chunks = reply.chunks
                if reply.gzip:
                    chunks = [gzip.compress(b"".join(chunks))]
                    if reply.cut:
                        data = chunks[0]
                        chunks = [data[: len(data) // 2], data[len(data) // 2 :]]
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.gzip:
                    self.send_header("Content-Encoding", "gzip")
                chunked = reply.chunked or len(chunks) != 1 or reply.cut
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(chunks[0])))
                self.end_headers()
                for i, c in enumerate(chunks):
                    if reply.cut and i == len(chunks) - 1:
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if chunked:
                        self.wfile.write(f"{len(c):x}\r\n".encode() + c + b"\r\n")
                    else:
                        self.wfile.write(c)
                    self.wfile.flush()
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = _serve

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that hangs up (the tests' timeouts, cut answers) is expected; anything else is shown.
                import sys

                if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                    super().handle_error(request, client_address)

        self.httpd = Quiet(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------------------------
# A small history service.

T0 = 1_774_533_601_193  # 2026-03-26T14:00:01.193Z


def iso(ms: int) -> str:
    return format_timestamp(from_ms(ms))


def snap(ts: int, side: str, price: str, quantity: str) -> Dict[str, Any]:
    return {"ts": iso(ts), "side": side, "price": price, "quantity": quantity}


def delta(ts: int, sequence: int, side: str, price: str, quantity_delta: str) -> Dict[str, Any]:
    return {"ts": iso(ts), "sequence": sequence, "side": side, "price": price, "quantity_delta": quantity_delta}


def gap(from_ts: int, to_ts: int, reason: str = "disconnect") -> Dict[str, Any]:
    return {"from_ts": iso(from_ts), "to_ts": iso(to_ts), "reason": reason, "detected_at": iso(to_ts)}


class FakeHistory:
    """Rows of one ticker served as the history service serves them: ``start_ts``/``end_ts`` inclusive, ``limit``
    (snapshots rounded up to whole books), cursors (the index of the next row), NDJSON with ``count`` and
    ``next_cursor`` in its end line (a stream stops early after ``stream_cap`` rows), JSON pages with ``next_cursor``
    when asked with ``format=json``, and gap markers with ``include=gaps``. ``cursors=False``: no ``next_cursor`` (the
    spec's pages); ``streams=False``: JSON pages of ``default_limit`` rows whatever ``format`` asks for (a service
    without streams). ``format=digest`` on snapshots: the books' digest lines (``digests=False``: refused with 400
    ``invalid_format``, as a service from before them). ``served``: the rows each request of rows was answered
    with."""

    def __init__(
        self,
        snapshots: Iterable[Dict[str, Any]],
        deltas: Iterable[Dict[str, Any]],
        gaps: Iterable[Dict[str, Any]] = (),
        *,
        ticker: str = "KXT",
        stream_cap: Optional[int] = None,
        cursors: bool = True,
        streams: bool = True,
        default_limit: int = 1000,
        digests: bool = True,
    ) -> None:
        self.rows = {"snapshots": list(snapshots), "deltas": list(deltas)}
        self.gaps = list(gaps)
        self.ticker = ticker
        self.stream_cap = stream_cap
        self.cursors = cursors
        self.streams = streams
        self.default_limit = default_limit
        self.digests = digests
        self.served: List[List[Dict[str, Any]]] = []
        self.server = Server(self.handle)
        self.url = self.server.url

    def close(self) -> None:
        self.server.close()

    def handle(self, req: Request) -> Reply:
        parts = req.path.split("/")  # ['', 'api', exchange, endpoint, ticker]
        if len(parts) != 5 or parts[1] != "api" or parts[4] != self.ticker:
            return Reply.json({"error": "unknown_ticker", "message": f"Unknown ticker {parts[-1]!r}"}, 404)
        endpoint = parts[3]
        start = parse_ms(req.q("start_ts")) if req.q("start_ts") else None
        end = parse_ms(req.q("end_ts")) if req.q("end_ts") else None
        if endpoint == "coverage":
            gs = [g for g in self.gaps if (end is None or parse_ms(g["from_ts"]) <= end) and (start is None or parse_ms(g["to_ts"]) >= start)]
            kind = lambda k: {"rows": len(self.rows[k]), "first_ts": None, "last_ts": None}  # noqa: E731
            return Reply.json(
                {
                    "exchange": parts[2],
                    "ticker": self.ticker,
                    "start_ts": iso(start or 0),
                    "end_ts": None if end is None else iso(end),
                    "snapshots": {**kind("snapshots"), "books": 0},
                    "deltas": kind("deltas"),
                    "gaps": gs,
                }
            )
        if endpoint not in self.rows:
            return Reply.json({"error": "not_found", "message": "no such path"}, 404)
        digest = self.streams and endpoint == "snapshots" and req.q("format") == "digest"
        if digest and not self.digests:
            return Reply.json({"error": "invalid_format", "message": "format must be json, ndjson, csv or parquet"}, 400)
        rows = self.rows[endpoint]
        cursor = req.q("cursor")
        if cursor is not None:
            first, end = (int(x) if x != "" else None for x in cursor.split(":"))
        else:
            first = next((i for i, r in enumerate(rows) if start is None or parse_ms(r["ts"]) >= start), len(rows))
        in_range = [i for i in range(first, len(rows)) if end is None or parse_ms(rows[i]["ts"]) <= end]
        ndjson = self.streams and req.q("format") in ("ndjson", "digest")
        limit = int(req.q("limit")) if req.q("limit") else (None if ndjson else self.default_limit)
        if ndjson and self.stream_cap is not None:
            limit = min(limit or self.stream_cap, self.stream_cap)
        chosen = in_range if limit is None else in_range[:limit]
        if endpoint == "snapshots" and limit is not None and len(in_range) > limit and chosen:
            last_ts = rows[chosen[-1]]["ts"]
            chosen = [i for i in in_range if parse_ms(rows[i]["ts"]) <= parse_ms(last_ts)]
        more = len(chosen) < len(in_range)
        self.served.append([rows[i] for i in chosen])
        next_cursor = f"{chosen[-1] + 1}:{'' if end is None else end}" if more and chosen else None
        out: List[Dict[str, Any]] = []
        gaps = []
        if "gaps" in (req.q("include") or ""):
            # The gaps overlapping the range (the tests ask for markers over unpaged ranges only).
            gaps = sorted(
                (g for g in self.gaps if parse_ms(g["to_ts"]) >= (start or 0) and (end is None or parse_ms(g["from_ts"]) <= end)),
                key=lambda g: g["from_ts"],
            )
        pending = list(gaps)
        for i in chosen:
            while pending and parse_ms(pending[0]["from_ts"]) < parse_ms(rows[i]["ts"]):
                out.append({"type": "gap", **pending.pop(0)})
            out.append(rows[i])
        if not more:
            out.extend({"type": "gap", **g} for g in pending)
        if digest:
            # One line per book: its ts, levels and digest (the client's own definition, depthgate.digest).
            books: Dict[str, List[Dict[str, Any]]] = {}
            for o in out:
                books.setdefault(o["ts"], []).append(o)
            out = [
                {
                    "ts": ts,
                    "levels": sum(1 for r in book if Decimal(r["quantity"]) != 0),
                    "digest": book_digest((r["side"], Decimal(r["price"]), Decimal(r["quantity"])) for r in book),
                }
                for ts, book in books.items()
            ]
        if ndjson:
            lines = [json.dumps(o, separators=(",", ":")) for o in out]
            count = len(out) if digest else len(chosen)
            lines.append(json.dumps({"type": "end", "count": count, "next_cursor": next_cursor}))
            body = ("\n".join(lines) + "\n").encode()
            return Reply(200, {"Content-Type": "application/x-ndjson; charset=utf-8"}, [body[i : i + 700] for i in range(0, len(body), 700)] or [b""], gzip=True)
        page: Dict[str, Any] = {
            "exchange": parts[2],
            "ticker": self.ticker,
            "rows": [o for o in out if "type" not in o],
            "count": len(chosen),
        }
        if gaps:
            page["gaps"] = [{k: v for k, v in o.items() if k != "type"} for o in out if o.get("type") == "gap"]
        if self.cursors and req.q("format") == "json":
            page["next_cursor"] = next_cursor
        return Reply.json(page)


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def pairs(levels: Iterable[Any]) -> List[Tuple[str, str]]:
    from depthgate.decimals import canonical

    return [(canonical(p), canonical(q)) for p, q in levels]
