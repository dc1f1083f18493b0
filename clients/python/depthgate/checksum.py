"""The book checksum, byte for byte the TypeScript client's (packages/client/src/checksum.ts):

1. Take the top ``depth`` levels of each side (default 25), best first: bids by price descending, asks ascending.
2. Write each level as ``price:quantity`` in canonical decimal text (as the history service writes it: no exponent,
   no trailing fraction zeros, no bare point — ``0.48:150``).
3. Interleave them — bid 1, ask 1, bid 2, ask 2, … — skipping a side once it has no more levels, and join
   everything with ``:``. An empty book is the empty string.
4. The checksum is the CRC-32 (IEEE 802.3, zlib's) of that text's UTF-8 bytes, as an unsigned 32-bit integer.

Example: bids 0.48 × 150 and 0.47 × 100, asks 0.5 × 20.25 → CRC-32 of ``0.48:150:0.5:20.25:0.47:100``.

A level is anything with ``price`` and ``quantity`` (a :class:`~depthgate.order_book.Level`, the service's
``{"price", "quantity"}`` objects), or a ``(price, quantity)`` pair; values are Decimals or decimal text.
"""

from __future__ import annotations

import zlib
from typing import Any, Sequence, Tuple

from .decimals import canonical


def _pq(level: Any) -> Tuple[Any, Any]:
    if isinstance(level, dict):
        return level["price"], level["quantity"]
    if hasattr(level, "price") and hasattr(level, "quantity"):
        return level.price, level.quantity
    price, quantity = level
    return price, quantity


def checksum_text(bids: Sequence[Any], asks: Sequence[Any], depth: int = 25) -> str:
    """The text of step 3 (useful to see why two checksums differ)."""
    parts = []
    for i in range(min(depth, max(len(bids), len(asks)))):
        if i < len(bids):
            p, q = _pq(bids[i])
            parts.append(f"{canonical(p)}:{canonical(q)}")
        if i < len(asks):
            p, q = _pq(asks[i])
            parts.append(f"{canonical(p)}:{canonical(q)}")
    return ":".join(parts)


def book_checksum(bids: Sequence[Any], asks: Sequence[Any], depth: int = 25) -> int:
    """The checksum of a book given as levels best first (an :class:`~depthgate.order_book.OrderBook`'s ``bids()``
    and ``asks()``, the service's book answer, anyone else's book)."""
    return zlib.crc32(checksum_text(bids, asks, depth).encode("utf-8")) & 0xFFFFFFFF
