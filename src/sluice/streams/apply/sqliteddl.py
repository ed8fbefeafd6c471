"""DDL LCRs on an SQLite target: the captured PostgreSQL statement said in SQLite.

A DDL LCR captured from PostgreSQL carries the statement as the source ran it
(``current_query()``).  PostgreSQL executes it as it is; SQLite needs the names mapped
(``owner.object`` is the table ``"OWNER.OBJECT"`` or ``OBJECT``, :mod:`.target`) and a few
PostgreSQL forms said its way.  What SQLite can express is translated:

* ``CREATE TABLE`` — column types kept (SQLite accepts any type name), ``serial`` types as
  ``integer``, ``::type`` casts and ``GENERATED … AS IDENTITY`` dropped, ``now()`` as
  ``CURRENT_TIMESTAMP``, ``REFERENCES`` mapped, storage clauses (``WITH (…)``,
  ``TABLESPACE``) dropped;
* ``ALTER TABLE`` — ``ADD [COLUMN]``, ``DROP [COLUMN]``, ``RENAME [COLUMN] a TO b`` and
  ``RENAME TO`` (one SQLite statement per action); ``OWNER TO`` and ``REPLICA IDENTITY``
  mean nothing in SQLite and are left out;
* ``DROP TABLE`` / ``DROP INDEX`` (one statement per name, ``CASCADE`` dropped);
* ``CREATE [UNIQUE] INDEX`` (``USING btree`` dropped; the index is named
  ``"OWNER.INDEX"`` as tables are);
* ``TRUNCATE TABLE`` as ``DELETE FROM``.

Anything else (``ALTER COLUMN … TYPE``, constraints added later, partitions, views,
sequences, functions, arrays …) SQLite cannot express: ORA-26714 says so, naming the
clause, and the transaction goes to the error queue with nothing applied.
"""

from __future__ import annotations

import re
from typing import Callable

from ...errors import ora
from ..capture.decode import oracle_name

__all__ = ["sqlite_statements"]

_TOKEN = re.compile(r"""
    (?P<space>\s+|--[^\n]*|/\*.*?\*/)
  | (?P<string>[Ee]?'(?:[^']|'')*')
  | (?P<dollar>\$(?P<dtag>[A-Za-z_]*)\$.*?\$(?P=dtag)\$)
  | (?P<quoted>"(?:[^"]|"")*")
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
  | (?P<cast>::)
  | (?P<punct>[^\s])
""", re.S | re.X)

_SERIAL = {"SERIAL": "integer", "SERIAL4": "integer", "BIGSERIAL": "integer", "SERIAL8": "integer",
           "SMALLSERIAL": "integer", "SERIAL2": "integer"}
_NO_OPS = ("OWNER", "REPLICA")     # ALTER TABLE … OWNER TO / REPLICA IDENTITY: nothing in SQLite


class _Tok(str):
    """A token; ``kind`` from the pattern; ``up``: a word in upper case (keywords)."""

    kind: str

    def __new__(cls, text: str, kind: str) -> "_Tok":
        t = super().__new__(cls, text)
        t.kind = kind
        return t

    @property
    def up(self) -> str:
        return self.upper() if self.kind == "word" else ""


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind != "space":
            out.append(_Tok(m.group(kind), kind))
    return out


def _statements(tokens: list[_Tok]) -> list[list[_Tok]]:
    out, cur = [], []
    for t in tokens:
        if t == ";" and t.kind == "punct":
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


def _ident(t: _Tok) -> str:
    """A PostgreSQL identifier token as PostgreSQL spells it (unquoted ones fold to lower case)."""
    if t.kind == "quoted":
        return t[1:-1].replace('""', '"')
    return t.lower()


class _Cannot(Exception):
    pass


class _Translator:
    def __init__(self, tokens: list[_Tok], schema: str | None,
                 table: Callable[[str, str], str], quote: Callable[[str], str],
                 object_name: str | None = None) -> None:
        self.toks, self.i = tokens, 0
        self.object_name = object_name
        self.schema, self.table, self.quote = schema, table, quote

    # -- reading --------------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> _Tok:
        t = self.peek()
        if t is None:
            raise _Cannot("the statement ends early")
        self.i += 1
        return t

    def accept(self, *words: str) -> bool:
        """Take the keywords ``words`` if they come next."""
        for k, w in enumerate(words):
            t = self.peek(k)
            if t is None or t.up != w:
                return False
        self.i += len(words)
        return True

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise _Cannot(f"expected {' '.join(words)} at {self.peek() or 'the end'}")

    def name(self) -> tuple[str, str]:
        """A possibly schema-qualified name: (owner, object) in Oracle spelling."""
        first = self.next()
        if first.kind not in ("word", "quoted"):
            raise _Cannot(f"expected a name at {first}")
        if self.peek() == "." and self.peek(1) is not None and self.peek(1).kind in ("word", "quoted"):
            self.i += 1
            second = self.next()
            return oracle_name(_ident(first)), oracle_name(_ident(second))
        if self.schema is None:
            raise _Cannot(f"no schema for {first}")
        return self.schema, oracle_name(_ident(first))

    def mapped(self) -> str:
        return self.table(*self.name())

    def group(self) -> list[_Tok]:
        """A parenthesised token run, parentheses included."""
        if self.peek() != "(":
            raise _Cannot(f"expected ( at {self.peek() or 'the end'}")
        depth, start = 0, self.i
        while True:
            t = self.next()
            if t == "(" and t.kind == "punct":
                depth += 1
            elif t == ")" and t.kind == "punct":
                depth -= 1
                if depth == 0:
                    return self.toks[start:self.i]

    def until_comma(self) -> list[_Tok]:
        """Tokens up to a comma outside parentheses (or the end)."""
        out, depth = [], 0
        while self.peek() is not None:
            t = self.peek()
            if t.kind == "punct" and t in "()":
                depth += 1 if t == "(" else -1
            if depth == 0 and t == "," and t.kind == "punct":
                break
            out.append(self.next())
        return out

    # -- column definitions ---------------------------------------------------------------
    def element(self, toks: list[_Tok]) -> str:
        """A column definition or table constraint, said in SQLite."""
        out: list[str] = []
        j = 0
        while j < len(toks):
            t = toks[j]
            if t.kind == "cast":              # 'x'::text -> 'x'
                j += 1
                j = self._skip_type(toks, j)
                continue
            if t == "[" and t.kind == "punct":
                raise _Cannot("array columns")
            if t.up == "GENERATED":           # GENERATED … AS IDENTITY [(…)]: the replica gets values
                k = j
                while k < len(toks) and toks[k].up != "IDENTITY":
                    if toks[k].up == "STORED" or (toks[k] == "(" and toks[k - 1].up == "AS"):
                        raise _Cannot("generated columns")
                    k += 1
                if k == len(toks):
                    raise _Cannot("generated columns")
                j = k + 1
                if j < len(toks) and toks[j] == "(":
                    j = self._skip_group(toks, j)
                continue
            if t.up == "REFERENCES":
                sub = _Translator(toks[j + 1:], self.schema, self.table, self.quote)
                out += ["REFERENCES", sub.mapped()]
                j += 1 + sub.i
                continue
            if t.up == "NOW" and j + 2 < len(toks) and toks[j + 1] == "(" and toks[j + 2] == ")":
                out.append("CURRENT_TIMESTAMP")
                j += 3
                continue
            if t.up in ("USING", "TABLESPACE"):
                raise _Cannot(f"{t.up} in a column definition")
            out.append(_SERIAL[t.up] if j == 1 and t.up in _SERIAL else t)
            j += 1
        return " ".join(out)

    @staticmethod
    def _skip_group(toks: list[_Tok], j: int) -> int:
        depth = 0
        while j < len(toks):
            if toks[j] == "(":
                depth += 1
            elif toks[j] == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return j

    def _skip_type(self, toks: list[_Tok], j: int) -> int:
        """Past a type name after ``::`` (words, ``(n)``, ``[]``)."""
        while j < len(toks) and toks[j].kind in ("word", "quoted"):
            j += 1
            if j < len(toks) and toks[j] == ".":
                j += 1
        if j < len(toks) and toks[j] == "(":
            j = self._skip_group(toks, j)
        while j + 1 < len(toks) and toks[j] == "[" and toks[j + 1] == "]":
            j += 2
        return j

    # -- statements ------------------------------------------------------------------------
    def translate(self) -> list[str]:
        if self.accept("CREATE"):
            self.accept("UNLOGGED")
            if self.accept("TABLE"):
                return self.create_table()
            unique = self.accept("UNIQUE")
            if self.accept("INDEX"):
                return self.create_index(unique)
        elif self.accept("ALTER", "TABLE"):
            return self.alter_table()
        elif self.accept("DROP", "TABLE"):
            return self.drop("TABLE")
        elif self.accept("DROP", "INDEX"):
            self.accept("CONCURRENTLY")
            return self.drop("INDEX")
        words = " ".join(self.toks[:3])
        raise _Cannot(f"{words} (SQLite has no such statement for a replica)")

    def create_table(self) -> list[str]:
        exists = self.accept("IF", "NOT", "EXISTS")
        name = self.mapped()
        if self.peek() != "(":
            raise _Cannot(f"CREATE TABLE … {self.peek() or ''} (only a column list)")
        body = _Translator(self.group()[1:-1], self.schema, self.table, self.quote)
        elements = []
        while body.peek() is not None:
            elements.append(body.element(body.until_comma()))
            if body.peek() == ",":
                body.next()
        while self.peek() is not None:       # storage clauses mean nothing to SQLite
            if self.accept("WITH") or self.accept("WITHOUT", "OIDS"):
                if self.peek() == "(":
                    self.group()
            elif self.accept("TABLESPACE"):
                self.next()
            else:
                raise _Cannot(f"CREATE TABLE … {self.peek().up or self.peek()}")
        return [f"CREATE TABLE {'IF NOT EXISTS ' if exists else ''}{name} ({', '.join(elements)})"]

    def alter_table(self) -> list[str]:
        self.accept("IF", "EXISTS")
        self.accept("ONLY")
        owner, obj = self.name()
        table = self.table(owner, obj)
        out = []
        while self.peek() is not None:
            action = self.until_comma()
            if self.peek() == ",":
                self.next()
            sub = _Translator(action, owner, self.table, self.quote)
            out += sub.alter_action(table, owner)
        return out

    def alter_action(self, table: str, owner: str) -> list[str]:
        first = self.peek()
        if first is not None and first.up in _NO_OPS:
            return []
        if self.accept("ADD"):
            self.accept("COLUMN")
            if self.peek() is not None and self.peek().up in ("CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN",
                                                                "CHECK", "EXCLUDE"):
                raise _Cannot("ALTER TABLE … ADD CONSTRAINT (SQLite adds no constraint to a table)")
            self.accept("IF", "NOT", "EXISTS")
            return [f"ALTER TABLE {table} ADD COLUMN {self.element(self.toks[self.i:])}"]
        if self.accept("DROP"):
            if self.peek() is not None and self.peek().up == "CONSTRAINT":
                raise _Cannot("ALTER TABLE … DROP CONSTRAINT (SQLite drops no constraint)")
            self.accept("COLUMN")
            self.accept("IF", "EXISTS")
            return [f"ALTER TABLE {table} DROP COLUMN {self.quote(_ident(self.next()))}"]
        if self.accept("RENAME", "TO"):
            new = oracle_name(_ident(self.next()))
            # the new name in the old name's form: "OWNER.NEW" for "OWNER.OLD", else NEW
            return [f"ALTER TABLE {table} RENAME TO "
                    f"{self.quote(f'{owner}.{new}') if '.' in table else self.quote(new)}"]
        if self.accept("RENAME"):
            if self.peek() is not None and self.peek().up == "CONSTRAINT":
                raise _Cannot("ALTER TABLE … RENAME CONSTRAINT")
            self.accept("COLUMN")
            old = _ident(self.next())
            self.expect("TO")
            return [f"ALTER TABLE {table} RENAME COLUMN {self.quote(old)} TO {self.quote(_ident(self.next()))}"]
        words = " ".join(self.toks[:4])
        raise _Cannot(f"ALTER TABLE … {words} (SQLite's ALTER TABLE adds, drops and renames only)")

    def drop(self, kind: str) -> list[str]:
        exists = "IF EXISTS " if self.accept("IF", "EXISTS") else ""
        out = []
        while self.peek() is not None and self.peek().up not in ("CASCADE", "RESTRICT"):
            owner, obj = self.name()
            target = self.table(owner, obj) if kind == "TABLE" else self.quote(f"{owner}.{obj}")
            out.append(f"DROP {kind} {exists}{target}")
            if self.peek() == ",":
                self.next()
        return out

    def create_index(self, unique: bool) -> list[str]:
        self.accept("CONCURRENTLY")
        exists = "IF NOT EXISTS " if self.accept("IF", "NOT", "EXISTS") else ""
        index = None
        if self.peek() is not None and self.peek().up != "ON":
            index = self.name()
        self.expect("ON")
        self.accept("ONLY")
        owner, obj = self.name()
        if self.accept("USING"):
            method = self.next()
            if method.up != "BTREE":
                raise _Cannot(f"CREATE INDEX … USING {method} (SQLite has B-tree indexes only)")
        columns = self.element(self.group())
        where = ""
        if self.accept("INCLUDE"):
            raise _Cannot("CREATE INDEX … INCLUDE")
        if self.accept("WHERE"):
            where = " WHERE " + self.element(self.toks[self.i:])
            self.i = len(self.toks)
        if self.peek() is not None:
            raise _Cannot(f"CREATE INDEX … {self.peek().up or self.peek()}")
        # PostgreSQL names an unnamed index itself: the LCR's object name has that name
        name = self.quote(f"{owner}.{index[1] if index else self.object_name}")
        return [f"CREATE {'UNIQUE ' if unique else ''}INDEX {exists}{name} ON "
                f"{self.table(owner, obj)} {columns}{where}"]


def sqlite_statements(command: str, text: str, schema: str | None, object_name: str | None,
                      table: Callable[[str, str], str], quote: Callable[[str], str]) -> list[str]:
    """The SQLite statements doing what the DDL LCR ``command`` with ``text`` did (``schema``:
    the source session's current schema, in Oracle spelling; ``object_name``: the LCR's
    object, which names an index PostgreSQL named itself).  :raises: ORA-26714 when SQLite
    cannot express it."""
    statements = [s for s in _statements(_tokens(text))
                  if " ".join(t.up for t in s[:len(command.split())]) == command
                  or (command.startswith("CREATE") and s and s[0].up == "CREATE")]
    if len(statements) > 1 and object_name:     # one query string, several statements: this LCR's
        statements = [s for s in statements
                      if any(t.kind in ("word", "quoted") and oracle_name(_ident(t)) == object_name for t in s)]
    if len(statements) != 1:
        raise ora(26714, f"{command}: the captured text holds {len(statements)} such statements "
                         f"(an SQLite target needs exactly one)")
    try:
        out = _Translator(statements[0], schema, table, quote, object_name).translate()
    except _Cannot as e:
        raise ora(26714, f"{command} cannot be applied on an SQLite target: {e}") from None
    return out
