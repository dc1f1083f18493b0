"""Exact decimals: prices and sizes travel as decimal strings and become :class:`decimal.Decimal`, never floats.

The accepted text is plain decimal notation, what the history service writes and a venue sends: an optional ``-``,
digits, optionally a point and digits (``-?[0-9]+(\\.[0-9]+)?``). No exponent, no ``+``, no spaces, no bare point,
no ``NaN``/``Infinity`` and no ``_`` (all of which :class:`~decimal.Decimal` itself would take).

:func:`canonical` gives the text the service writes — no exponent, no trailing fraction zeros, no bare point, no
``-0`` — so equal values always print the same (``Decimal("0.4800")`` → ``"0.48"``, ``Decimal("1E+2")`` → ``"100"``).

Arithmetic on book quantities goes through :data:`EXACT`, a context whose precision (100 digits) holds every value
the history tables can store (``Decimal(38, 18)``) and which raises instead of rounding, so a sum is exact or an
error, never quietly rounded by Python's default 28-digit context.
"""

from __future__ import annotations

import decimal
import re
from decimal import Decimal
from typing import Union

from ._text import decimal_text
from .errors import DataError

_PLAIN = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_CANONICAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?")

#: Exact arithmetic: 100 significant digits, and any rounding, overflow or invalid operation raises.
EXACT = decimal.Context(
    prec=100,
    rounding=decimal.ROUND_HALF_EVEN,
    Emin=-999999,
    Emax=999999,
    traps=[decimal.Inexact, decimal.Rounded, decimal.InvalidOperation, decimal.Overflow, decimal.DivisionByZero],
)

DecimalLike = Union[str, Decimal]


def is_decimal_text(text: object) -> bool:
    """True when ``text`` is a str in plain decimal notation."""
    return isinstance(text, str) and _PLAIN.fullmatch(text) is not None


def parse_decimal(text: str) -> Decimal:
    """The exact value of plain decimal text; :class:`DataError` (``invalid_decimal``) for anything else."""
    if not isinstance(text, str) or _PLAIN.fullmatch(text) is None:
        raise DataError("invalid_decimal", "not a decimal number in plain notation", text=repr(text))
    return Decimal(text)


def to_decimal(value: DecimalLike) -> Decimal:
    """A Decimal from plain decimal text or a finite Decimal (an int is taken as is; a float is refused: it is
    not exact)."""
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise DataError("invalid_decimal", "not a finite decimal", text=str(value))
        return value
    if isinstance(value, bool):
        raise DataError("invalid_decimal", "a bool is not a decimal", text=repr(value))
    if isinstance(value, int):
        return Decimal(value)
    return parse_decimal(value)


def canonical(value: DecimalLike) -> str:
    """The canonical text of a decimal, as the service writes it: ``"0.48"``, ``"-150"``, ``"0"``, ``"100"``."""
    if isinstance(value, str) and _CANONICAL.fullmatch(value) is not None and value != "-0":
        return value
    return decimal_text(to_decimal(value))


def normalize(value: Decimal) -> Decimal:
    """The same value with trailing fraction zeros dropped and never an exponent above zero (``Decimal("1.50")`` →
    ``Decimal("1.5")``, ``Decimal("1E+2")`` → ``Decimal("100")``, ``-0`` → ``0``): what book levels hold, so their
    ``str()`` is short (``str`` of a Decimal still uses an exponent below 10^-6; :func:`canonical` never does)."""
    if not value:
        return Decimal(0)
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    if exponent > 0:
        return value.quantize(Decimal(1), context=EXACT)
    if exponent < 0 and digits[-1] == 0:
        n = len(digits)
        while n > 1 and digits[n - 1] == 0 and exponent < 0:
            n -= 1
            exponent += 1
        return Decimal((sign, digits[:n], exponent))
    return value
