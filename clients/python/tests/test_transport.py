"""The transport and the gateway client against local servers: the key, request ids, retries that honour
Retry-After, error answers as HttpError with the service's code, timeouts, cut bodies, gzip, kept-alive
connections."""

import base64
import gzip
import json
import pickle
import socket
import time
import traceback
import unittest
from typing import Callable, List

from depthgate import DataError, GatewayClient, HistoryClient, HttpError, TransportError
from depthgate.http import Transport, parse_retry_after

from fakes import Reply, Request, Server


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def raised(call: Callable[[], object]) -> HttpError:
    """The HttpError a call raises, its traceback kept (frames and their locals)."""
    try:
        call()
    except HttpError as err:
        return err
    raise AssertionError("no HttpError")


class TransportTest(unittest.TestCase):
    def test_the_key_a_request_id_per_attempt_and_kept_alive_connections(self) -> None:
        with Server(lambda r: Reply.json({"exchange": "venue_b", "count": 1, "tickers": ["KXA"]})) as server:
            client = HistoryClient(server.url + "/prefix/", api_key="dg_test-key")
            self.assertEqual(client.tickers("venue_b", prefix="kx"), ["KXA"])
            self.assertEqual(client.tickers("kalshi"), ["KXA"])
            first, second = server.requests
            self.assertEqual(first.path, "/prefix/api/venue_b/tickers")
            self.assertEqual(first.query, {"prefix": ["kx"]})
            self.assertEqual(first.headers["x-api-key"], "dg_test-key")
            self.assertIn("gzip", first.headers["accept-encoding"])
            self.assertRegex(first.headers["x-request-id"], r"^[0-9a-f-]{36}$")
            self.assertNotEqual(first.headers["x-request-id"], second.headers["x-request-id"])
            self.assertEqual(server.connections, 1)  # the second request reused the connection
            basic = HistoryClient(server.url, api_key="dg_k", key_in="basic")
            basic.tickers("venue_b")
            self.assertEqual(server.requests[-1].headers["authorization"], "Basic ZGdfazo=")
            self.assertNotIn("x-api-key", server.requests[-1].headers)
        with self.assertRaises(ValueError):
            Transport("http://user:pw@127.0.0.1:1")
        with self.assertRaises(ValueError):
            Transport("http://127.0.0.1:1", api_key="dg_ key")

    def test_the_key_is_sent_but_in_no_repr_vars_pickle_error_or_tracebacks_locals(self) -> None:
        secret = "dg_secret"
        forms = (secret, base64.b64encode(f"{secret}:".encode()).decode())  # as given, and as HTTP Basic sends it
        with Server(lambda r: Reply.json({"error": "unauthorized", "message": "no such key"}, 401)) as server:
            # The key as api_key (either way it is sent), or as one of the headers given.
            given = ({"api_key": secret}, {"api_key": secret, "key_in": "basic"}, {"headers": {"X-API-Key": secret}})
            for make, options in [(make, options) for make in (HistoryClient, GatewayClient) for options in given]:
                with self.subTest(client=make.__name__, options=options):
                    client = make(server.url, **options)
                    # Caught here, not by assertRaises (which clears the traceback's frames).
                    call = client.tickers if make is HistoryClient else lambda _: client.get("kalshi", "markets")
                    err = raised(lambda: call("venue_b"))
                    sent = server.requests[-1].headers
                    basic = options.get("key_in") == "basic"
                    if basic:
                        self.assertEqual(sent["authorization"], f"Basic {forms[1]}")
                    else:
                        self.assertEqual(sent["x-api-key"], secret)
                    # A traceback's locals, as a debugger or an error reporter shows them: the request's headers.
                    tb = "".join(traceback.TracebackException.from_exception(err, capture_locals=True).format())
                    self.assertIn("authorization" if basic else "x-api-key", tb.lower())
                    with self.assertRaises(TypeError) as refused:
                        pickle.dumps(client)
                    shown = [repr(client), repr(vars(client)), repr(vars(client.http)), str(err), repr(err.args), tb]
                    shown.append(str(refused.exception))
                    for text in shown:
                        for form in forms:
                            self.assertNotIn(form, text)

    def test_error_answers_carry_the_services_code_message_status_and_request_id(self) -> None:
        def handler(r: Request) -> Reply:
            if "html" in r.path:
                return Reply(502, {"Content-Type": "text/html"}, [b"<html>bad gateway</html>"])
            if "upstream" in r.path:
                return Reply.json({"detail": "not found upstream"}, 404)
            return Reply.json(
                {"error": "unknown_ticker", "message": 'Unknown ticker "KXNOPE" on venue_b'},
                404,
                headers={"X-Request-Id": "rid-from-service"},
            )

        with Server(handler) as server:
            client = HistoryClient(server.url, api_key="dg_k")
            with self.assertRaises(HttpError) as caught:
                client.coverage("venue_b", "KXNOPE")
            e = caught.exception
            self.assertEqual((e.status, e.code, e.message), (404, "unknown_ticker", 'Unknown ticker "KXNOPE" on venue_b'))
            self.assertEqual(e.request_id, "rid-from-service")
            self.assertEqual(e.json["error"], "unknown_ticker")
            self.assertIn("/api/venue_b/coverage/KXNOPE", e.url)
            self.assertIn("404 unknown_ticker", str(e))
            with self.assertRaises(HttpError) as caught:
                client.book("venue_b", "html")
            self.assertEqual((caught.exception.status, caught.exception.code), (502, "non_json_error_body"))
            self.assertIn("bad gateway", caught.exception.body)
            with self.assertRaises(HttpError) as caught:
                client.book("venue_b", "upstream")
            self.assertEqual((caught.exception.code, caught.exception.json), ("http_error", {"detail": "not found upstream"}))

    def test_429_and_503_are_retried_after_retry_after_and_a_longer_one_is_not_waited_for(self) -> None:
        calls: List[float] = []

        def handler(r: Request) -> Reply:
            calls.append(time.monotonic())
            if len(calls) == 1:
                return Reply.json({"error": "rate_limited", "message": "slow down"}, 429, headers={"Retry-After": "1"})
            if len(calls) == 2:
                return Reply.json({"error": "service_unavailable", "message": "x"}, 503)
            return Reply.json({"tickers": []})

        with Server(handler) as server:
            client = HistoryClient(server.url, retry_base_delay=0.05)
            self.assertEqual(client.tickers("venue_b"), [])
            self.assertEqual(len(calls), 3)
            self.assertGreaterEqual(calls[1] - calls[0], 0.95)  # Retry-After: 1 was honoured
            ids = {r.headers["x-request-id"] for r in server.requests}
            self.assertEqual(len(ids), 3)
        with Server(lambda r: Reply.json({"error": "rate_limited", "message": "m"}, 429, headers={"Retry-After": "120"})) as server:
            client = HistoryClient(server.url, max_retry_delay=10)
            with self.assertRaises(HttpError) as caught:
                client.tickers("venue_b")
            self.assertEqual((caught.exception.code, caught.exception.retry_after), ("rate_limited", 120.0))
            self.assertEqual(len(server.requests), 1)
        with Server(lambda r: Reply.json({"error": "service_unavailable", "message": "m"}, 503)) as server:
            with self.assertRaises(HttpError) as caught:
                HistoryClient(server.url, retries=2, retry_base_delay=0.01).tickers("venue_b")
            self.assertEqual(caught.exception.code, "service_unavailable")
            self.assertEqual(len(server.requests), 3)
        with Server(lambda r: Reply.json({"error": "invalid_limit", "message": "m"}, 400)) as server:
            with self.assertRaises(HttpError):
                HistoryClient(server.url).tickers("venue_b")
            self.assertEqual(len(server.requests), 1)  # other statuses are not retried

    def test_no_answer_is_a_network_error_after_the_retries(self) -> None:
        port = free_port()
        client = HistoryClient(f"http://127.0.0.1:{port}", retries=2, retry_base_delay=0.01)
        with self.assertRaises(TransportError) as caught:
            client.tickers("venue_b")
        self.assertEqual(caught.exception.code, "network_error")
        self.assertIsNotNone(caught.exception.request_id)
        # A server that drops the connection without answering: retried, then a network error.
        with Server(lambda r: Reply(drop=True)) as server:
            with self.assertRaises(TransportError) as caught:
                HistoryClient(server.url, retries=1, retry_base_delay=0.01).tickers("venue_b")
            self.assertEqual(caught.exception.code, "network_error")
            self.assertEqual(len(server.requests), 2)

    def test_timeouts_until_the_headers_and_while_a_body_streams(self) -> None:
        with Server(lambda r: Reply.json({"tickers": []}, delay=1.0)) as server:
            with self.assertRaises(TransportError) as caught:
                HistoryClient(server.url, timeout=0.2).tickers("venue_b")
            self.assertEqual(caught.exception.code, "timeout")
            self.assertEqual(len(server.requests), 1)  # a timeout is not retried
        body = [b'{"tickers":', b"[]}"]
        with Server(lambda r: Reply(200, {"Content-Type": "application/json"}, body, chunk_delay=1.0)) as server:
            with self.assertRaises(TransportError) as caught:
                HistoryClient(server.url, idle_timeout=0.2).tickers("venue_b")
            self.assertEqual(caught.exception.code, "timeout")

    def test_a_gzip_body_of_several_members_is_read_whole_never_its_first_member_only(self) -> None:
        # RFC 1952: a gzip body is a series of members (a proxy may write one per flush); fetch reads them all.
        first, second = gzip.compress(b"line 1\n"), gzip.compress(b"line 2\n")
        text = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
        for chunks in ([first + second], [first, second], [first[:5], first[5:] + second[:3], second[3:] + b"\0\0"]):
            with self.subTest(chunks=len(chunks)), Server(lambda r, c=chunks: Reply(200, text, c)) as server:
                self.assertEqual(GatewayClient(server.url).get("venue-b", "text").data, "line 1\nline 2\n")
        # The second member cut short is a cut body, as the first would be.
        with Server(lambda r: Reply(200, text, [first + second[:-4]])) as server:
            with self.assertRaises(DataError) as caught:
                GatewayClient(server.url).get("venue-b", "text")
            self.assertEqual(caught.exception.code, "stream_cut")

    def test_cut_and_corrupt_bodies_are_errors_never_short_results(self) -> None:
        with Server(lambda r: Reply(200, {"Content-Type": "application/json"}, [b'{"tickers":["A",', b'"B"]}'], cut=True)) as server:
            with self.assertRaises(DataError) as caught:
                HistoryClient(server.url).tickers("venue_b")
            self.assertEqual(caught.exception.code, "stream_cut")
        with Server(lambda r: Reply(200, {"Content-Type": "application/json"}, [b'{"tickers":["A","B"]}'], gzip=True, cut=True)) as server:
            with self.assertRaises(DataError) as caught:
                HistoryClient(server.url).tickers("venue_b")
            self.assertEqual(caught.exception.code, "stream_cut")
        with Server(lambda r: Reply(200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, [b"not gzip at all"])) as server:
            with self.assertRaises(DataError) as caught:
                HistoryClient(server.url).tickers("venue_b")
            self.assertEqual(caught.exception.code, "malformed_body")
        with Server(lambda r: Reply.json({"tickers": "KXA"})) as server:
            with self.assertRaises(DataError) as caught:
                HistoryClient(server.url).tickers("venue_b")
            self.assertEqual(caught.exception.code, "malformed_body")
        with Server(lambda r: Reply(200, {"Content-Type": "application/json"}, [b"<html>"])) as server:
            with self.assertRaises(DataError) as caught:
                HistoryClient(server.url).tickers("venue_b")
            self.assertEqual(caught.exception.code, "malformed_body")

    def test_redirects_within_the_origin_are_followed_with_the_key_to_another_origin_none_is(self) -> None:
        # Another origin: the same host on another port, recording what reaches it.
        with Server(lambda r: Reply.json({"tickers": []})) as other:

            def handler(r: Request) -> Reply:
                if r.path.startswith("/loop"):
                    to = "/loop"
                elif r.path.startswith("/old/"):
                    to = r.path[4:]
                elif r.path.startswith("/away/"):
                    to = other.url + r.path[5:]
                else:
                    return Reply.json({"method": r.method, "tickers": ["KXA"]})
                return Reply(303 if r.q("see") else 307, {"Location": to}, [b"moved"])

            with Server(handler) as server:
                for key_in, header in (("header", "x-api-key"), ("basic", "authorization")):
                    with self.subTest(key_in=key_in):
                        # Within the origin: followed, the key sent again.
                        near = HistoryClient(server.url + "/old", api_key="dg_secret", key_in=key_in)
                        self.assertEqual(near.tickers("venue_b"), ["KXA"])
                        self.assertEqual(
                            [r.path for r in server.requests[-2:]], ["/old/api/venue_b/tickers", "/api/venue_b/tickers"]
                        )
                        self.assertIn(header, server.requests[-1].headers)
                        # To another origin: a TransportError `redirect`, and nothing reaches it.
                        far = HistoryClient(server.url + "/away", api_key="dg_secret", key_in=key_in)
                        with self.assertRaises(TransportError) as caught:
                            far.tickers("venue_b")
                        self.assertEqual(caught.exception.code, "redirect")
                        self.assertIn(other.url, str(caught.exception))
                        gateway = GatewayClient(server.url + "/away", api_key="dg_secret", key_in=key_in)
                        with self.assertRaises(TransportError) as caught:
                            gateway.post("venue-a-clob", "books", [])
                        self.assertEqual(caught.exception.code, "redirect")
                self.assertEqual(other.requests, [])
                # A 303 after a POST goes on as a GET without the body; a redirect loop ends after 5 hops.
                del server.requests[:]
                answer = GatewayClient(server.url + "/old", api_key="dg_secret").post("venue-a-clob", "books", [], {"see": "1"})
                self.assertEqual(answer.data["method"], "GET")
                self.assertEqual(
                    [(r.method, r.headers.get("x-api-key"), r.headers.get("content-type"), r.body) for r in server.requests],
                    [("POST", "dg_secret", "application/json", b"[]"), ("GET", "dg_secret", None, b"")],
                )
                del server.requests[:]
                with self.assertRaises(TransportError) as caught:
                    HistoryClient(server.url + "/loop").tickers("venue_b")
                self.assertEqual(caught.exception.code, "redirect")
                self.assertEqual(len(server.requests), 6)

    def test_retry_after_forms(self) -> None:
        self.assertEqual(parse_retry_after("5"), 5.0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))
        # Not delta-seconds, nor a date: ignored (the usual backoff applies), never an exception out of the request.
        for odd in ("\u00b2", "1\u00b9", "1.5", "-1"):
            self.assertIsNone(parse_retry_after(odd), odd)
        self.assertAlmostEqual(parse_retry_after("Thu, 01 Jan 2026 00:00:10 GMT", now=1_767_225_600.0) or 0, 10.0)


class GatewayTest(unittest.TestCase):
    def test_call_forwards_the_resource_and_query_with_the_key(self) -> None:
        def handler(r: Request) -> Reply:
            if r.method == "POST":
                return Reply.json([{"asset_id": "1", "echo": json.loads(r.body)}], headers={"X-Cache": "MISS"})
            if r.path.endswith("/text"):
                return Reply(200, {"Content-Type": "text/plain"}, [b"OK"])
            if "NOPE" in r.path:
                return Reply.json({"error": "not_found", "message": "market not found"}, 404)
            return Reply.json({"markets": [{"ticker": "KXA"}]}, headers={"X-Cache": "HIT", "X-Request-Id": "rid-1"})

        with Server(handler) as server:
            gateway = GatewayClient(server.url, api_key="dg_gate")
            answer = gateway.call("kalshi", "markets", {"limit": 2, "status": "open", "tickers": ["A", "B"], "skip": None})
            req = server.requests[-1]
            self.assertEqual(req.path, "/api/v1/kalshi/markets")
            self.assertEqual(req.query, {"limit": ["2"], "status": ["open"], "tickers": ["A", "B"]})
            self.assertEqual(req.headers["x-api-key"], "dg_gate")
            self.assertEqual(answer.data, {"markets": [{"ticker": "KXA"}]})
            self.assertEqual((answer.status, answer.cache, answer.request_id), (200, "HIT", "rid-1"))
            gateway.get("venue-b", "markets/KX A/orderbook")
            self.assertEqual(server.requests[-1].path, "/api/v1/venue-b/markets/KX A/orderbook")
            posted = gateway.post("venue-a-clob", "books", [{"token_id": "1"}])
            self.assertEqual(server.requests[-1].headers["content-type"], "application/json")
            self.assertEqual(posted.data[0]["echo"], [{"token_id": "1"}])
            self.assertEqual(gateway.get("venue-a-clob", "text").data, "OK")
            with self.assertRaises(HttpError) as caught:
                gateway.get("kalshi", "markets/NOPE")
            self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
            for platform, resource in (("kal/shi", "markets"), ("kalshi", "../admin"), ("kalshi", "a//b")):
                with self.subTest(platform=platform, resource=resource), self.assertRaises(ValueError):
                    gateway.get(platform, resource)


if __name__ == "__main__":
    unittest.main()
