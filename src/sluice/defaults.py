"""``sluice.defaults``: python-oracledb's ``oracledb.defaults``, with what Sluice reads of it.

``sluice.defaults.fetch_decimals = True`` fetches the numbers of the queries a cursor
runs as ``decimal.Decimal`` (python-oracledb's NUMBER), read at each ``execute``;
False (the default): an ``int`` when whole, else a ``float``, as python-oracledb does.
"""

from __future__ import annotations

__all__ = ["Defaults", "defaults"]


class Defaults:
    """python-oracledb's ``Defaults``: the settings a connection's statements start from."""

    __slots__ = ("fetch_decimals",)

    def __init__(self) -> None:
        self.fetch_decimals = False


defaults = Defaults()
