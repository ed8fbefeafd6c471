"""Rule -> SQL boolean expression, for SQLite and PostgreSQL.

``compiler.compile_sql`` is the entry point; ``base`` holds what both renderings share
(SQL fragments with their parameters), ``sqlite`` and ``postgres`` the two dialects.
The SQLite rendering calls the user functions every store connection has
(:mod:`sluice.store.sqlitefns`).
"""
