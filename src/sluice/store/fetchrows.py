"""How many rows ``FETCH FIRST n PERCENT`` and ``FETCH … WITH TIES`` take, as SQL the store runs.

:mod:`.sqllimits` reads a query block's row limiting clause; for the two forms neither
store's ``LIMIT`` says, it asks here for the count as an expression (a scalar subquery
both stores take in ``LIMIT`` and PostgreSQL in ``FETCH FIRST (…) ROWS``):

* ``n PERCENT``: Oracle takes ``CEIL(n / 100 × rows)`` of the rows the block selects (all
  of them, before OFFSET): ``(SELECT (COUNT(*) * a + b - 1) / b FROM (block) …)`` with
  ``a / b`` the fraction ``n / 100`` — integer arithmetic, exact as Oracle's NUMBER;
* ``WITH TIES`` on SQLite (PostgreSQL has its own): the rows up to the last one the count
  takes and those whose ORDER BY keys equal its keys, that is the rows whose ``RANK()`` in
  the ORDER BY's order is at most ``offset + n`` (a row tied with the n-th has the n-th's
  rank, which is at most n; any row after them more than n) — counted over the block's
  FROM … HAVING, less the offset.  Without ORDER BY, WITH TIES is ONLY (Oracle's too).
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["percent_rows", "tied_rows"]


def percent_rows(body: str, percent: Fraction) -> str:
    """The rows ``percent`` of the rows the query ``body`` selects are, rounded up."""
    share = max(percent, Fraction(0)) / 100
    a, b = share.numerator, share.denominator
    count = "COUNT(*)" if a == 1 else f"COUNT(*) * {a}"
    rows = count if b == 1 else f"({count} + {b - 1}) / {b}"
    return f"(SELECT {rows} FROM ({body}) sluice_pc)"


def tied_rows(source: str, keys: str, upto: str, skip: int) -> str:
    """SQLite's count of the rows after the ``skip`` first that ``FETCH FIRST upto - skip
    ROWS WITH TIES`` takes: ``source`` the block's FROM … HAVING, ``keys`` its ORDER BY's."""
    return (f"max((SELECT COUNT(*) FROM (SELECT RANK() OVER (ORDER BY {keys}) AS sluice_rk {source}) sluice_tk "
            f"WHERE sluice_rk <= {upto}) - {skip}, 0)")
