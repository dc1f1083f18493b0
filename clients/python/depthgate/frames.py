"""``to_pandas()``: rows and books as ``pandas.DataFrame``s, where pandas is installed (it is never needed otherwise:
the import happens when a frame is asked for).

Timestamps become ``datetime64[ns, UTC]``. Decimals stay exact by default — :class:`~decimal.Decimal` objects in
``object`` columns, which pandas adds, compares and sorts exactly — or become ``float64`` (``decimals="float"``,
for speed, rounded to the nearest double) or canonical text (``decimals="str"``).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Sequence

from .decimals import canonical
from .errors import InvalidArgumentError
from .rows import Gap, TradeRow, TradesGap

_TIME_COLUMNS = ("ts", "received_ts", "from_ts", "to_ts", "detected_at")
_DECIMAL_COLUMNS = ("price", "quantity", "quantity_delta", "size", "open", "high", "low", "close", "volume", "vwap")
_INT_COLUMNS = ("sequence", "trades")


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "to_pandas() needs pandas: install it (Debian: apt-get install python3-pandas; else pip install pandas)"
        ) from None
    return pandas


def _decimals(series: Any, how: str) -> Any:
    if how == "decimal":
        return series
    if how == "float":
        return series.map(lambda v: float("nan") if v is None else float(v)).astype("float64")
    return series.map(lambda v: None if v is None else canonical(v))


def _check(how: str) -> None:
    if how not in ("decimal", "float", "str"):
        raise InvalidArgumentError('decimals must be "decimal", "float" or "str"')


def rows_frame(items: Iterable[Any], decimals: str = "decimal", columns: Sequence[str] = ()) -> Any:
    """A DataFrame of rows (NamedTuples), one column per field. When gap markers or trade lines come among the rows,
    a ``type`` column says which each line is (``row``, ``gap``, ``trade``, ``trades_gap``)."""
    _check(decimals)
    pd = _pandas()
    records: List[Dict[str, Any]] = []
    kinds = set()
    for item in items:
        kind = (
            "trades_gap"
            if isinstance(item, TradesGap)
            else "gap" if isinstance(item, Gap) else "trade" if isinstance(item, TradeRow) else "row"
        )
        kinds.add(type(item))
        record = item._asdict()
        record["type"] = kind
        records.append(record)
    mixed = len(kinds) > 1 or any(r["type"] in ("gap", "trades_gap") for r in records)
    frame = pd.DataFrame.from_records(records, columns=None if records else ["type", *columns])
    if not mixed and "type" in frame.columns:
        frame = frame.drop(columns=["type"])
    elif mixed:
        frame = frame[["type", *[c for c in frame.columns if c != "type"]]]
    for c in frame.columns:
        if c in _TIME_COLUMNS:
            frame[c] = pd.to_datetime(frame[c], utc=True)
        elif c in _DECIMAL_COLUMNS:
            frame[c] = _decimals(frame[c], decimals)
        elif c in _INT_COLUMNS and frame[c].isna().any():
            frame[c] = frame[c].astype("Int64")
    return frame


def levels_frame(bids: Sequence[Any], asks: Sequence[Any], decimals: str = "decimal") -> Any:
    """A DataFrame of a book's levels: ``side``, ``level`` (1 = best), ``price``, ``quantity``; bids first."""
    _check(decimals)
    pd = _pandas()
    records = [{"side": "bid", "level": i + 1, "price": p, "quantity": q} for i, (p, q) in enumerate(bids)]
    records += [{"side": "ask", "level": i + 1, "price": p, "quantity": q} for i, (p, q) in enumerate(asks)]
    frame = pd.DataFrame.from_records(records, columns=["side", "level", "price", "quantity"])
    frame["level"] = frame["level"].astype("int64")
    for c in ("price", "quantity"):
        frame[c] = _decimals(frame[c], decimals)
    return frame
