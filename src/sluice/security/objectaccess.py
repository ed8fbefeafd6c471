"""What a user's statement needs of the tables and sequences of other schemas it names.

Oracle (SQL Language Reference, SELECT / INSERT / UPDATE / DELETE / MERGE prerequisites): a
query needs SELECT on each table of another schema it reads, INSERT / UPDATE / DELETE the
object privilege on the table the statement writes (MERGE: UPDATE for WHEN MATCHED, INSERT
for WHEN NOT MATCHED, DELETE for its DELETE clause), and -- SQL92_SECURITY, TRUE since
12.2 -- SELECT on the written table too where its columns are read: an UPDATE's or
DELETE's WHERE, a RETURNING clause, MERGE's DELETE.  NEXTVAL / CURRVAL of another schema's
sequence needs SELECT on it.  The owner, a superuser (SYS, DBA) and a holder of the ANY
system privilege (SELECT ANY TABLE, INSERT ANY TABLE …, SELECT ANY SEQUENCE) need no grant;
the refusal is the Authorizer's (``check_object``: ORA-01031, or ORA-00942 / ORA-02289 when
the user may do nothing at all with the object).

Which tables are another schema's: those made at a cursor, whose owners the catalog records
(:func:`sluice.store.tableddl.user_table_names`) -- ``scott.emp``, or an unqualified ``emp``
that is SCOTT's table of the store's one schema (another user reaching it by its bare name
reaches SCOTT's table) --, and on PostgreSQL ``scott.emp`` of the schema ``scott`` of the
database user SCOTT (``create table scott.emp`` by an administrator makes it there, unrecorded).  A name counts where a table is named: after FROM, JOIN, INTO,
UPDATE, DELETE, USING, or after a comma in a FROM clause.  Tables made in the database
itself have no recorded owner: whoever names one owns it, as before.

The statement's needs are worked out once per statement text and catalog version and kept
per session (:class:`StatementAccess`): a statement on the user's own tables costs a
dictionary lookup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..store.seqwords import is_sequence_word, named
from ..store.sqloracle import tokens
from ..store.tableddl import schema_table, user_table_names

if TYPE_CHECKING:
    from .authorize import Authorizer

__all__ = ["StatementAccess", "needs"]

# (OWNER.NAME, privilege, TABLE | SEQUENCE)
Need = tuple[str, str, str]

_TABLE_AFTER = frozenset({"FROM", "JOIN", "INTO", "UPDATE", "USING", "DELETE"})
# words that end a FROM clause's list of tables at its depth
_CLAUSES = frozenset({"SELECT", "WHERE", "GROUP", "ORDER", "HAVING", "SET", "VALUES", "ON", "CONNECT", "START",
                      "UNION", "INTERSECT", "MINUS", "EXCEPT", "RETURNING", "FETCH", "OFFSET", "WHEN", "FOR",
                      "INTO", "USING", "FROM", "JOIN"})
_KEPT = 512         # statement texts kept per session


def needs(sql: str, user: str, tables: dict[tuple[str, str], str],
          held: Callable[[str, str], bool] = lambda owner, name: False) -> tuple[Need, ...]:
    """What ``sql``, run by ``user``, needs of other schemas' tables (``tables``: the recorded
    owners' ``(OWNER, NAME) -> physical name``; ``held(owner, name)``: a table of the owner's own
    schema, PostgreSQL's ``hr.emp``) and sequences, each once."""
    toks = tokens(sql)
    if not toks:
        return ()
    others = {name: owner for owner, name in tables if owner != user and (user, name) not in tables}
    verb = next((t.word for t in toks if t.kind == "id"), "")
    out: dict[Need, None] = {}
    depth, clause = 0, [""]
    targets: list[str] = []         # the tables the statement writes, in order
    for i, t in enumerate(toks):
        if t.text == "(":
            depth += 1
            clause.append("")
            continue
        if t.text == ")":
            if depth:
                depth -= 1
                clause.pop()
            continue
        if t.kind != "id":
            continue
        word = t.word
        if is_sequence_word(word):
            owner, name, _ = named(word, user)
            if owner != user:
                out[(f"{owner}.{name}", "SELECT", "SEQUENCE")] = None
            continue
        before = toks[i - 1] if i else None
        placed = before is not None and (before.word in _TABLE_AFTER or before.text == "," and clause[-1] == "FROM")
        if word in _CLAUSES:
            clause[-1] = word
        if not placed or (verb in ("SELECT", "WITH") and before is not None and before.word == "INTO"):
            continue
        obj = _foreign(word, user, tables, others, held)
        if obj is None:
            continue
        if depth == 0 and before is not None and _writes(verb, before.word, i, toks):
            targets.append(obj)
        else:
            out[(obj, "SELECT", "TABLE")] = None
    for obj in targets:
        for privilege in _written(verb, toks):
            out[(obj, privilege, "TABLE")] = None
    return tuple(out)


def _foreign(word: str, user: str, tables: dict[tuple[str, str], str], others: dict[str, str],
             held: Callable[[str, str], bool]) -> str | None:
    """``OWNER.NAME`` of the table of another schema that ``word`` names, or None."""
    parts = [p.strip() for p in word.split(".")]
    if len(parts) == 2:
        if parts[0] != user and ((parts[0], parts[1]) in tables or held(parts[0], parts[1])):
            return f"{parts[0]}.{parts[1]}"
        return None
    if len(parts) == 1 and parts[0] in others:
        return f"{others[parts[0]]}.{parts[0]}"
    return None


def _writes(verb: str, before: str, i: int, toks: Any) -> bool:
    """Whether the table named at token ``i`` (after the word ``before``) is the one ``verb``
    writes: INSERT's INTO (each INTO of INSERT ALL), UPDATE's, DELETE's, MERGE's INTO."""
    if verb == "INSERT" or verb == "MERGE":
        return before == "INTO"
    if verb == "UPDATE":
        return before == "UPDATE" and i == 1
    if verb == "DELETE":
        return i == 1 or (before == "FROM" and i == 2 and toks[0].word == "DELETE")
    return False


def _written(verb: str, toks: Any) -> tuple[str, ...]:
    """The privileges the written table needs: the verb's, and SELECT where SQL92_SECURITY
    asks it (its columns read in a WHERE or RETURNING clause, MERGE's DELETE)."""
    words = {t.word for t in toks if t.kind == "id"}
    if verb == "MERGE":
        privileges = [p for p in ("UPDATE", "INSERT", "DELETE") if p in words]
        return (*privileges, "SELECT") if "DELETE" in words or "RETURNING" in words else tuple(privileges)
    reads = "RETURNING" in words or verb in ("UPDATE", "DELETE") and "WHERE" in words
    return (verb, "SELECT") if reads else (verb,)


class StatementAccess:
    """The object checks of one session's statements (its :class:`.authorize.Authorizer`'s
    user): :func:`needs` kept per statement text and catalog version."""

    def __init__(self, authz: "Authorizer") -> None:
        self.authz = authz
        self._kept: dict[str, tuple[int, tuple[Need, ...]]] = {}

    def _held(self, owner: str, name: str) -> bool:
        """A table of the database user ``owner``'s own schema (PostgreSQL; asked once per
        statement text and catalog version)."""
        return self.authz.catalog.user(owner) is not None and schema_table(self.authz.catalog.store, owner, name)

    def check(self, sql: str) -> None:
        """Raise what Oracle answers when the session's user may not run ``sql`` on the
        tables and sequences of other schemas it names (ORA-00942 / 01031 / 02289)."""
        store = self.authz.catalog.store
        version = store.catalog_version()
        kept = self._kept.get(sql)
        if kept is None or kept[0] != version:
            if len(self._kept) >= _KEPT:
                self._kept.clear()
            kept = self._kept[sql] = (version, needs(sql, self.authz.username, user_table_names(store),
                                                     self._held))
        if kept[1] and not self.authz.is_superuser():
            for obj, privilege, kind in kept[1]:
                self.authz.check_object(obj, privilege, kind)
