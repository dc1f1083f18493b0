"""The book digest, number for number the TypeScript client's (packages/client/src/digest.ts; docs/history.md, "Book
digests"): one number that says whether two parties hold the same whole book.

1. A level's weight: with ``t`` the UTF-8 bytes of ``side + ":" + price`` (``bid:0.48``, the price in canonical
   decimal text), ``a`` = MurmurHash3 x86_32 of ``t`` with seed 0 and ``b`` = the same with seed 1, the weight is
   ``a · 2**21 + b // 2**11`` (1 where that is 0).
2. The book's digest: Σ quantity · weight over its levels, modulo the prime 2**61 − 1, each quantity in units of
   10**-18 (the stored scale), as decimal text. An empty book's is ``"0"``.

The history service gives each recorded book's digest (``format=digest`` on the snapshots endpoint), which is how
``HistoryClient.replay`` checks every recorded snapshot without reading its rows. Books that differ have the same
digest with a chance of about 2**-53 (one level only if its quantities differ by a multiple of 2.305843009213693951):
a check against loss and corruption, not against a book chosen to collide.

Example: ``bid:0.48`` has weight 1750694520571150; a book of 150 there and nothing else has digest
``"1894132580178927783"``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Dict, Iterable, Tuple

from .decimals import EXACT, canonical

#: The digest's modulus: the Mersenne prime 2**61 − 1.
DIGEST_MODULUS = (1 << 61) - 1

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_M32 = 0xFFFFFFFF


def murmur3(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86_32 of ``data``, unsigned."""
    h = seed & _M32
    n = len(data)
    tail = n & 3
    for i in range(0, n - tail, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _C1) & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        h ^= (k * _C2) & _M32
        h = ((h << 13) | (h >> 19)) & _M32
        h = (h * 5 + 0xE6546B64) & _M32
    if tail:
        k = int.from_bytes(data[n - tail :], "little")
        k = (k * _C1) & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        h ^= (k * _C2) & _M32
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def level_weight(side: str, price: object) -> int:
    """A level's weight (step 1): ``side`` is ``"bid"`` or ``"ask"``; ``price`` a Decimal or decimal text."""
    t = f"{side}:{canonical(price)}".encode("utf-8")  # type: ignore[arg-type]
    w = murmur3(t, 0) * 2_097_152 + murmur3(t, 1) // 2048
    return w or 1


_WEIGHTS: Dict[Tuple[str, Decimal], int] = {}


def book_digest(levels: Iterable[Tuple[str, Decimal, Decimal]]) -> str:
    """The digest (step 2) of a book given as ``(side, price, quantity)`` triples, quantities with at most 18 fraction
    digits (what an :class:`~depthgate.order_book.OrderBook` holds)."""
    total = 0
    for side, price, quantity in levels:
        key = (side, price)
        weight = _WEIGHTS.get(key)
        if weight is None:
            if len(_WEIGHTS) > 100_000:
                _WEIGHTS.clear()
            weight = _WEIGHTS[key] = level_weight(side, price)
        total += int(EXACT.scaleb(quantity, 18)) * weight
    return str(total % DIGEST_MODULUS)
