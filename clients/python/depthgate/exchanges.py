# Generated from the platform registry (packages/platforms) by `pnpm run generate`; do not edit.
"""The history service's exchanges, by stored code: key, the platform's real name, and the aliases paths accept."""

from typing import Dict, Tuple, Union

EXCHANGES: Tuple[Dict[str, Union[str, Tuple[str, ...]]], ...] = (
    {"key": "venue_b", "name": "Kalshi", "aliases": ("kalshi",)},
    {"key": "venue_c", "name": "Gemini", "aliases": ("gemini",)},
    {"key": "venue_a_us", "name": "Polymarket US", "aliases": ("polymarket_us", "polymarket-us")},
    {"key": "venue_a_clob", "name": "Polymarket CLOB", "aliases": ("polymarket", "polymarket_clob", "polymarket-clob")},
    {"key": "venue_d", "name": "Coinbase Exchange", "aliases": ("coinbase",)},
)
