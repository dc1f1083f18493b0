"""depthgate: the Python client of depthgate's history service and gateway, with exact order-book reconstruction.

Standard library only (pandas optional, for ``to_pandas()``)::

    from depthgate import HistoryClient, GatewayClient, OrderBook

    history = HistoryClient("http://127.0.0.1:7081", api_key="dg_…")
    book = history.rebuild("venue_b", "KXBTCD-26MAR07-T100000", "2026-03-26T14:00:00Z")

clients/python/README.md has the tour; the TypeScript client (packages/client) is the same design.
"""

from ._version import __version__
from .answers import BookVerified, CallerWindow, Coverage, KindCoverage, ServiceBook, VerificationCoverage
from .checksum import book_checksum, checksum_text
from .decimals import canonical, parse_decimal
from .exchanges import EXCHANGES
from .errors import BookError, DataError, DepthgateError, HttpError, InvalidArgumentError, TransportError
from .gateway import GatewayClient, GatewayResponse
from .history import HistoryClient
from .order_book import Best, Level, OrderBook
from .replay import BookAt, BookEvent, GapEvent, SnapshotEvent
from .rows import Bar, DeltaRow, Gap, SnapshotRow, TradeRow, TradesGap
from .series import Page, RowStream
from .timestamps import format_timestamp, parse_timestamp

__all__ = [
    "__version__",
    "EXCHANGES",
    "HistoryClient",
    "GatewayClient",
    "GatewayResponse",
    "OrderBook",
    "Level",
    "Best",
    "SnapshotRow",
    "DeltaRow",
    "TradeRow",
    "Bar",
    "Gap",
    "TradesGap",
    "Page",
    "RowStream",
    "BookVerified",
    "Coverage",
    "KindCoverage",
    "CallerWindow",
    "ServiceBook",
    "VerificationCoverage",
    "BookAt",
    "BookEvent",
    "SnapshotEvent",
    "GapEvent",
    "book_checksum",
    "checksum_text",
    "canonical",
    "parse_decimal",
    "parse_timestamp",
    "format_timestamp",
    "DepthgateError",
    "HttpError",
    "TransportError",
    "DataError",
    "BookError",
    "InvalidArgumentError",
]
