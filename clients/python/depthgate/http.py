"""The one HTTP path of both clients, on the standard library's :mod:`http.client`: kept-alive connections, the key,
a request id per attempt, a timeout until the answer's headers and an idle timeout while a body streams, gzip
undone as the body arrives, bounded retries that honour ``Retry-After``, and error answers turned into
:class:`~depthgate.errors.HttpError`.

Retried (as the TypeScript client does): 429 and 503 answers (after ``Retry-After`` when the answer gives it, else
an exponential backoff with full jitter), and requests that got no answer at all (connection refused or reset).
Not retried: a ``Retry-After`` longer than ``max_retry_delay`` (the error carries it), any other status, a timeout.
Every request the clients send is a read (GETs, and the gateway's read-only POSTs), so a retry never repeats an
effect. A kept-alive connection the server closed meanwhile is replaced at once, without counting as an attempt.

Redirects (as the TypeScript client does; :mod:`http.client` follows none by itself): within the service's origin
(scheme, host and port) followed with the key, at most ``MAX_REDIRECTS`` hops; to another origin not at all — a
:class:`~depthgate.errors.TransportError` ``redirect``, the key never sent there. Followed without the key instead,
the history service would answer an anonymous caller's window (its last day): a different result, and no error.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import random
import re
import socket
import ssl
import threading
import time
import uuid
import zlib
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import SplitResult, quote, urlencode, urljoin, urlsplit

from ._version import __version__
from .errors import DataError, HttpError, TransportError

QueryValue = Union[str, int, bool]
Query = Mapping[str, Union[QueryValue, Sequence[QueryValue], None]]

_MAX_BODY_SHOWN = 500
#: Redirects followed within the service's origin before giving up (``redirect``).
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = (301, 302, 303, 307, 308)
_CHUNK = 65536
#: ``Retry-After`` as delta-seconds: ASCII digits only (``str.isdigit`` takes ``²``, which ``int`` refuses), as the
#: TypeScript client reads it.
_DELTA_SECONDS = re.compile(r"[0-9]+")


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Answer:
    """An answer with status below 400 and what is needed to read its body: decompressed chunks as they arrive
    (:meth:`chunks`), the whole text (:meth:`text`), or giving it up (:meth:`close`)."""

    def __init__(
        self,
        transport: "Transport",
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        label: str,
        request_id: Optional[str],
    ) -> None:
        self._transport = transport
        self._conn: Optional[http.client.HTTPConnection] = conn
        self.response = response
        self.status = response.status
        self.headers = response.headers
        #: The request's method and URL.
        self.url = label
        #: The answer's X-Request-Id (ours when it echoes it).
        self.request_id = response.getheader("x-request-id") or request_id

    @property
    def content_type(self) -> str:
        return (self.response.getheader("content-type") or "").lower()

    def chunks(self) -> Iterator[bytes]:
        """The body in chunks as they arrive, gzip undone. A body cut short is a ``stream_cut`` error, a stalled one
        a ``timeout``; stopping early closes the connection (the rest is not read)."""
        encoding = (self.response.getheader("content-encoding") or "identity").strip().lower()
        inflate = _Gunzip() if encoding in ("gzip", "x-gzip") else None
        if inflate is None and encoding not in ("identity", ""):
            self.close()
            raise DataError("malformed_body", f"a body in an encoding not asked for: {encoding}", url=self.url)
        finished = False
        response = self.response
        try:
            while True:
                if response.length == 0:
                    # The whole Content-Length arrived (read1 does not mark the answer done by itself, and an
                    # answer not marked done would keep its connection from being reused).
                    response.close()
                    break
                try:
                    data = response.read1(_CHUNK)
                except (socket.timeout, TimeoutError):
                    raise TransportError(
                        "timeout",
                        f"{self.url}: the body stalled for {self._transport.idle_timeout} s",
                        self.url,
                        self.request_id,
                    ) from None
                except (http.client.IncompleteRead, http.client.HTTPException, OSError) as err:
                    raise DataError(
                        "stream_cut", f"the body was cut: {err!r}", url=self.url, request_id=self.request_id
                    ) from None
                if not data:
                    if response.length:
                        raise DataError(
                            "stream_cut",
                            f"the body ended {response.length} bytes short of its Content-Length",
                            url=self.url,
                            request_id=self.request_id,
                        )
                    break
                if inflate is None:
                    yield data
                    continue
                try:
                    out = inflate.feed(data)
                except zlib.error as err:
                    raise DataError(
                        "malformed_body", f"the gzip body is corrupt: {err}", url=self.url, request_id=self.request_id
                    ) from None
                if out:
                    yield out
            if inflate is not None:
                if not inflate.complete:
                    raise DataError(
                        "stream_cut", "the gzip body ended early", url=self.url, request_id=self.request_id
                    )
            finished = True
        finally:
            self._release(reuse=finished)

    def text(self) -> str:
        """The whole body as UTF-8 text."""
        data = b"".join(self.chunks())
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError("malformed_body", "the body is not UTF-8 text", url=self.url, request_id=self.request_id) from None

    def lines(self) -> Iterator[Tuple[str, bool]]:
        """The body's lines (``\\n``, a ``\\r`` before it dropped), each with whether it ended with a newline: only
        the last can be unterminated, and a line format's last line always is terminated, so a ``False`` means the
        body stopped inside a line."""
        rest = b""
        for chunk in self.chunks():
            rest += chunk
            if b"\n" not in chunk:
                continue
            parts = rest.split(b"\n")
            rest = parts.pop()
            for p in parts:
                yield self._decode(p), True
        if rest:
            yield self._decode(rest), False

    def _decode(self, line: bytes) -> str:
        if line.endswith(b"\r"):
            line = line[:-1]
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError("malformed_body", "the stream is not UTF-8 text", url=self.url, request_id=self.request_id) from None

    def close(self) -> None:
        """Gives the body up (the connection is closed, not reused)."""
        self._release(reuse=False)

    def _release(self, reuse: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._transport._release(conn, reuse and not self.response.will_close)

    def __enter__(self) -> "Answer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Gunzip:
    """A gzip body undone as it arrives: every member of it (RFC 1952 §2.2: a gzip file is a series of members, which
    the TypeScript client's ``fetch`` reads too), zero padding after the last one skipped, as :mod:`gzip` does."""

    def __init__(self) -> None:
        self._member = zlib.decompressobj(16 + zlib.MAX_WBITS)

    @property
    def complete(self) -> bool:
        """Whether the body so far ends at the end of a member (else it was cut inside one)."""
        return self._member.eof

    def feed(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._member.eof:
                data = data.lstrip(b"\0")
                if not data:
                    break
                self._member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(self._member.decompress(data))
            data = self._member.unused_data if self._member.eof else b""
        return b"".join(out)


class Transport:
    """Sends requests to one service. Thread-safe: connections are taken from a small pool and returned once their
    body has been read.

    ``base_url``: the service's URL (``http://127.0.0.1:7081``; a path prefix is kept; credentials in it are refused).
    ``api_key``: a depthgate key (``dg_…``), sent as ``x-api-key`` (``key_in="header"``) or as HTTP Basic with the
    key as user name (``key_in="basic"``); without one the history service treats you as anonymous.
    ``timeout``: seconds to connect and for the answer's headers (per socket operation); ``idle_timeout``: the
    longest silence while a body streams. ``retries``: further attempts (429, 503, no answer); ``max_retry_delay``:
    the longest wait before one (a longer ``Retry-After`` is not waited for); ``retry_base_delay``: the first backoff
    without ``Retry-After``, doubling per attempt, with full jitter. ``request_ids``: send an ``X-Request-Id`` with
    every attempt. ``headers``: added to every request.

    The key (and an ``X-API-Key`` or ``Authorization`` header given) is held so that no ``repr``, ``vars()``, error
    message or traceback's locals show it, and a client is not pickled (:class:`_Secret`).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        key_in: str = "header",
        timeout: float = 30.0,
        idle_timeout: float = 60.0,
        retries: int = 3,
        max_retry_delay: float = 60.0,
        retry_base_delay: float = 0.5,
        request_ids: bool = True,
        headers: Optional[Mapping[str, str]] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None:
        parts = urlsplit(str(base_url))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL: {base_url!r}")
        if parts.username or parts.password:
            raise ValueError("base_url must not carry credentials: give the key as api_key")
        if key_in not in ("header", "basic"):
            raise ValueError('key_in must be "header" or "basic"')
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self._root = f"{parts.scheme}://{parts.netloc}"
        self.base_url = self._root + self.prefix
        self._origin = _origin(parts)
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.retries = retries
        self.max_retry_delay = max_retry_delay
        self.retry_base_delay = retry_base_delay
        self.request_ids = request_ids
        self._ssl = ssl_context
        self._headers: Dict[str, str] = {
            "Accept-Encoding": "gzip",
            "User-Agent": f"depthgate-python/{__version__}",
        }
        self._headers.update(_hidden(headers))
        if api_key is not None:
            if not api_key or not all(0x21 <= ord(c) <= 0x7E for c in api_key):
                raise ValueError("api_key must be printable ASCII")
            if key_in == "basic":
                self._headers["Authorization"] = _Secret("Basic " + base64.b64encode(f"{api_key}:".encode()).decode())
            else:
                self._headers["x-api-key"] = _Secret(api_key)
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    # --------------------------------------------------------------------------------------------- URLs

    def path(self, path: str, query: Optional[Query] = None) -> str:
        """The request target of a path (with its query) under the base URL; list values repeat the parameter,
        None values are left out."""
        target = self.prefix + path
        if query:
            pairs: List[Tuple[str, str]] = []
            for k, v in query.items():
                if v is None:
                    continue
                for item in v if isinstance(v, (list, tuple)) else [v]:
                    pairs.append((k, _text(item)))
            if pairs:
                target += "?" + urlencode(pairs, quote_via=quote)
        return target

    # ------------------------------------------------------------------------------------------ requests

    def request(
        self,
        target: str,
        *,
        method: str = "GET",
        headers: Optional[Mapping[str, str]] = None,
        body: Optional[bytes] = None,
    ) -> Answer:
        """Sends a request (with retries); returns an :class:`Answer` with status below 400, else raises."""
        label = f"{method} {self._root}{target}"
        attempt = 0
        while True:
            request_id = str(uuid.uuid4()) if self.request_ids else None
            sent = dict(self._headers)
            sent.update(_hidden(headers))
            if request_id is not None:
                sent["X-Request-Id"] = request_id
            try:
                conn, response = self._follow(method, target, sent, body, label, request_id)
            except (socket.timeout, TimeoutError):
                raise TransportError("timeout", f"{label}: no answer within {self.timeout} s", label, request_id) from None
            except (OSError, http.client.HTTPException) as err:
                if attempt < self.retries:
                    self._sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                raise TransportError("network_error", f"{label}: {_describe(err)}", label, request_id) from None
            answer = Answer(self, conn, response, label, request_id)
            if response.status < 400:
                return answer
            retry_after = parse_retry_after(response.getheader("retry-after"))
            delay = retry_after if retry_after is not None else self._backoff(attempt)
            if response.status in (429, 503) and attempt < self.retries and delay <= self.max_retry_delay:
                answer.close()
                self._sleep(delay)
                attempt += 1
                continue
            raise _error_of(answer, retry_after)

    def _follow(
        self,
        method: str,
        target: str,
        headers: Dict[str, str],
        body: Optional[bytes],
        label: str,
        request_id: Optional[str],
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """One attempt, its redirects followed within the service's origin (see the top of this module): a 303 — and a
        301 or 302 after a POST — goes on as a GET without its body, as browsers and ``fetch`` do."""
        hops = 0
        while True:
            conn, response = self._send(method, target, headers, body)
            location = response.getheader("location") if response.status in _REDIRECT_STATUSES else None
            if location is None:
                return conn, response
            Answer(self, conn, response, label, request_id).close()
            to = urlsplit(urljoin(self._root + target, location))
            if _origin(to) != self._origin:
                origin = f"{to.scheme}://{to.netloc.rpartition('@')[2]}"
                why = f"redirected to another origin ({origin}), not followed: the key is not sent there"
                raise TransportError("redirect", f"{label}: {why}", label, request_id)
            if hops == MAX_REDIRECTS:
                raise TransportError("redirect", f"{label}: more than {MAX_REDIRECTS} redirects", label, request_id)
            hops += 1
            if (response.status == 303 and method != "HEAD") or (response.status < 303 and method == "POST"):
                method, body = "GET", None
                headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
            target = (to.path or "/") + (f"?{to.query}" if to.query else "")

    def _send(
        self, method: str, target: str, headers: Dict[str, str], body: Optional[bytes]
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """One attempt. A kept-alive connection that turns out closed (the server's idle timeout) is replaced by a
        new one at once; a failure on a new connection is the caller's to retry."""
        while True:
            conn, reused = self._take()
            try:
                if conn.sock is not None:
                    conn.sock.settimeout(self.timeout)
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest):
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            if conn.sock is not None:
                conn.sock.settimeout(self.idle_timeout)
            return conn, response

    def _take(self) -> Tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        if self.scheme == "https":
            return _HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self._ssl), False
        return _HTTPConnection(self.host, self.port, timeout=self.timeout), False

    def _release(self, conn: http.client.HTTPConnection, reuse: bool) -> None:
        if reuse and conn.sock is not None:
            with self._lock:
                if len(self._idle) < 16:
                    self._idle.append(conn)
                    return
        conn.close()

    def close(self) -> None:
        """Closes the idle connections (those in use close when their body is done)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to do
            pass

    def _backoff(self, attempt: int) -> float:
        return min(self.max_retry_delay, random.random() * self.retry_base_delay * 2**attempt)

    @staticmethod
    def _sleep(seconds: float) -> None:
        time.sleep(seconds)


class _Secret(str):
    """A header value that carries the key: sent as it is (it is the text), but shown by ``repr`` as ``'<hidden>'`` —
    so neither ``vars()`` of a client nor the headers in a traceback's locals, a debugger or a log of them carry it —
    and never pickled (as the TypeScript client keeps the key in private fields, out of ``inspect`` and JSON)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'<hidden>'"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("a depthgate client holds an API key and is not pickled: make one where it is needed")


#: The headers that carry the key (``api_key`` sent either way, or given among ``headers``).
_KEY_HEADERS = ("x-api-key", "authorization")


def _hidden(headers: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """Headers with the values of those that carry the key as :class:`_Secret`."""
    return {k: _Secret(v) if k.lower() in _KEY_HEADERS else v for k, v in (headers or {}).items()}


class _HTTPConnection(http.client.HTTPConnection):
    """Without Nagle's algorithm: http.client writes a request's headers and its body in two sends, and the second
    would wait for the first one's acknowledgement (up to 40 ms of delayed ACK)."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _HTTPSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _origin(parts: SplitResult) -> Tuple[str, str, int]:
    """A URL's origin: scheme, host (lower case) and port (the scheme's own when it names none)."""
    try:
        port = parts.port
    except ValueError:  # a port that is not one: no origin of ours
        port = -1
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


def _text(v: QueryValue) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _describe(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def _error_of(answer: Answer, retry_after: Optional[float]) -> HttpError:
    """An error answer as an HttpError: its code is the service's ``error`` when the body is ``{"error","message"}``."""
    try:
        raw = b"".join(answer.chunks())
    except Exception:  # the status is what matters; a body that cannot be read is shown empty
        raw = b""
    text = raw.decode("utf-8", errors="replace")
    json_body: Any = None
    try:
        json_body = json.loads(text)
        is_json = True
    except ValueError:
        is_json = False
    if is_json and isinstance(json_body, dict) and isinstance(json_body.get("error"), str):
        code = json_body["error"]
        message = json_body.get("message") if isinstance(json_body.get("message"), str) else ""
    elif is_json:
        code, message = "http_error", text[:200]
    else:
        code = "non_json_error_body"
        message = f"error body is not JSON ({answer.content_type or 'no content type'}): {text[:200]}"
    return HttpError(
        status=answer.status,
        code=code,
        message=message,
        json_body=json_body if is_json else None,
        body=text[:_MAX_BODY_SHOWN],
        request_id=answer.request_id,
        url=answer.url,
        retry_after=retry_after,
    )
