"""VIEW_DATES (the columns :mod:`sluice.store.sqloracle` takes for DATEs in a statement on
Sluice's views) is exactly the set of columns that are timestamps in every view of the
PostgreSQL store that has them: a view changed, the list follows."""

from __future__ import annotations

import psycopg
import pytest

import sluice

from sluice.store.viewdates import VIEW_DATES
from tests.conftest import make_queue


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)    # the views' own types
def test_view_dates_are_the_views_timestamp_columns(conn, dsn):
    make_queue(conn, "Q")         # an AQ$ view too
    conn.commit()
    schema = dsn.rsplit("schema=", 1)[1]
    with psycopg.connect(dsn.partition("?")[0]) as db:
        rows = db.execute("SELECT c.column_name, c.data_type FROM information_schema.columns c "
                          "JOIN information_schema.views v ON (v.table_schema, v.table_name) = "
                          "(c.table_schema, c.table_name) WHERE c.table_schema = %s", (schema,)).fetchall()
    types: dict[str, set[str]] = {}
    for name, data_type in rows:
        types.setdefault(name.upper(), set()).add(data_type)
    dates = {name for name, kinds in types.items() if all(k.startswith(("timestamp", "date")) for k in kinds)}
    assert VIEW_DATES == dates | {"LOGON_TIME"}       # V$SESSION: its rows given per statement (instanceviews)
    cur = conn.cursor()
    cur.execute("SELECT * FROM v$session")
    assert {d[0] for d in cur.description if d[1] is sluice.DB_TYPE_DATE} == {"LOGON_TIME"}
