"""``sluice.defaults``: python-oracledb's ``oracledb.defaults``, with what Sluice reads of it.

``sluice.defaults.fetch_decimals = True`` fetches the numbers of the queries a cursor
runs as ``decimal.Decimal`` (python-oracledb's NUMBER), read at each ``execute``;
False (the default): an ``int`` when whole, else a ``float``, as python-oracledb does.

``sluice.defaults.fetch_lobs`` (True, python-oracledb's default): a query's CLOB, NCLOB
and BLOB columns are fetched as ``sluice.LOB`` objects; False: as ``str`` / ``bytes``.
Read at each ``execute`` (``cursor.execute(…, fetch_lobs=…)`` overrides it for one
statement, as python-oracledb 3.4 has it); it does not change LOBs returned otherwise.
"""

from __future__ import annotations

__all__ = ["Defaults", "defaults"]


class Defaults:
    """python-oracledb's ``Defaults``: the settings a connection's statements start from."""

    __slots__ = ("fetch_decimals", "fetch_lobs")

    def __init__(self) -> None:
        self.fetch_decimals = False
        self.fetch_lobs = True


defaults = Defaults()
