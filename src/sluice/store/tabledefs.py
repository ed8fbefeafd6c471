"""Oracle's table DDL read: names, types, column definitions and constraints, as
:mod:`.tableddl` runs them (also a stored SQLite CREATE TABLE, read to change one of its
columns).  Errors as Oracle's parser gives them: ORA-00902 for a type Oracle has not,
ORA-00904 for a reserved word or a bad name, ORA-00906 / 00907 / 00905 for what is missing,
ORA-00957, ORA-02260, ORA-01727 / 01728, ORA-00910."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import DatabaseError, not_supported, ora
from .sqloracle import tokens

__all__ = ["CLAUSE", "PG_DOMAINS", "RESERVED", "Column", "Constraint", "OracleType", "Reader", "Table",
           "check_table", "physical_name", "quoted", "read_column", "read_constraint", "read_stored_table",
           "read_table_body"]

# Oracle's reserved words: no unquoted name (ORA-00904 for a column, ORA-00903 for a table)
RESERVED = frozenset("""ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK CLUSTER COLUMN
    COMMENT COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE DESC DISTINCT DROP ELSE EXCLUSIVE
    EXISTS FILE FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED IMMEDIATE IN INCREMENT INDEX INITIAL INSERT
    INTEGER INTERSECT INTO IS LEVEL LIKE LOCK LONG MAXEXTENTS MINUS MLSLABEL MODE MODIFY NOAUDIT NOCOMPRESS
    NOT NOWAIT NULL NUMBER OF OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR PUBLIC RAW RENAME RESOURCE
    REVOKE ROW ROWID ROWNUM ROWS SELECT SESSION SET SHARE SIZE SMALLINT START SUCCESSFUL SYNONYM SYSDATE
    TABLE THEN TO TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE
    WITH""".split())
# words that end a column's DEFAULT expression (at its top level)
CLAUSE = frozenset({"CONSTRAINT", "NOT", "NULL", "PRIMARY", "UNIQUE", "CHECK", "REFERENCES", "GENERATED",
                    "ENABLE", "DISABLE", "COLLATE"})
# physical storage clauses Oracle takes after a table's or an index's definition: no meaning here
STORAGE = frozenset({"LOGGING", "NOLOGGING", "COMPRESS", "NOCOMPRESS", "ONLINE", "PARALLEL", "NOPARALLEL",
                     "CACHE", "NOCACHE", "MONITORING", "NOMONITORING"})
# PostgreSQL: the domains (name, base type) that keep Oracle's type readable (:mod:`.tableddl`)
PG_DOMAINS = {"DATE": ("date_time", "timestamp(0) without time zone"), "CLOB": ("clob", "text"),
              "NCLOB": ("nclob", "text"), "LONG": ("clob", "text"), "BLOB": ("blob", "bytea")}


# -- reading the statement -------------------------------------------------------------
class Reader:
    """The tokens of a statement (:func:`.sqloracle.tokens`) read in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> Any:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def word(self, k: int = 0) -> str:
        t = self.peek(k)
        return "" if t is None else t.word if t.kind == "id" else t.text if t.kind == "op" else ""

    def accept(self, *words: str) -> bool:
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise ora(906) if words == ("(",) else ora(907) if words == (")",) else ora(905)

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def end(self) -> None:
        while self.word() in STORAGE or self.word() == "TABLESPACE":
            self.i += 2 if self.word() == "TABLESPACE" else 1
        if not self.at_end():
            raise ora(922, self.peek().text)

    def parts(self, code: int) -> list[str]:
        """A name, maybe qualified (``hr.emp``, ``"Hr"."Emp"``): its parts as Oracle has them."""
        out: list[str] = []
        while True:
            t = self.peek()
            if t is None or t.kind not in ("id", "qid"):
                raise ora(code, "" if t is None else t.text)
            if t.kind == "id":
                for p in t.text.split("."):
                    p = p.strip().upper()
                    if p in RESERVED:
                        raise ora(code, p)
                    out.append(_checked(p))
            else:
                inner = t.text[1:-1].replace('""', '"')
                if not inner:
                    raise ora(code, t.text)
                out.append(_checked(inner))
            self.i += 1
            if self.word() != ".":
                return out
            self.i += 1

    def qualified(self, code: int = 903) -> tuple[str | None, str]:
        p = self.parts(code)
        if len(p) > 2:
            raise ora(code, ".".join(p))
        return (p[0], p[1]) if len(p) == 2 else (None, p[0])

    def column(self) -> str:
        p = self.parts(904)
        if len(p) != 1:
            raise ora(904, ".".join(p))
        return p[0]

    def columns(self) -> list[str]:
        """``(a, b, …)``."""
        self.expect("(")
        out = [self.column()]
        while self.accept(","):
            out.append(self.column())
        self.expect(")")
        return out

    def number(self) -> int:
        sign = -1 if self.accept("-") else 1
        t = self.peek()
        if t is None or t.kind != "num" or not t.text.isdigit():
            raise ora(902, "" if t is None else t.text)
        self.i += 1
        return sign * int(t.text)

    def expression(self, stop: frozenset[str] = frozenset()) -> str:
        """The text of an expression up to a ``,`` or ``)`` at its level or a word of ``stop``."""
        depth, first = 0, self.i
        while not self.at_end():
            w = self.word()
            if depth == 0 and (w in (",", ")") or w in stop):
                break
            depth += (w == "(") - (w == ")")
            self.i += 1
        if self.i == first:
            raise ora(936)
        return self.text[self.toks[first].start:self.toks[self.i - 1].end]

    def rest(self) -> str:
        """The statement's text from here on."""
        return self.text[self.peek().start:] if not self.at_end() else ""


def _checked(name: str) -> str:
    if len(name.encode()) > 128:
        raise ora(972, name)
    return name


# -- what a statement says ----------------------------------------------------------------
@dataclass(frozen=True)
class OracleType:
    """A column's Oracle type: its base name and what qualifies it."""

    base: str
    precision: int | None = None
    scale: int | None = None
    size: int | None = None
    chars: bool = False               # VARCHAR2(n CHAR)
    zone: str = ""                    # " WITH TIME ZONE" / " WITH LOCAL TIME ZONE"

    @property
    def text(self) -> str:
        """Oracle's spelling (the declared type on SQLite)."""
        b = self.base
        if b == "NUMBER":
            if self.precision is None and self.scale is None:
                return b
            if self.scale:
                return f"NUMBER({self.precision or 38},{self.scale})"
            return f"NUMBER({self.precision or 38})"
        if b == "FLOAT":
            return f"FLOAT({self.precision or 126})"
        if b in ("VARCHAR2", "NVARCHAR2", "CHAR", "NCHAR", "RAW"):
            return f"{b}({self.size}{' CHAR' if self.chars else ''})"
        if b == "TIMESTAMP":
            return f"TIMESTAMP({6 if self.precision is None else self.precision}){self.zone}"
        return b

    @property
    def sqlite(self) -> str:
        """SQLite's declared type: Oracle's spelling within SQLite's grammar (a size last)."""
        if self.base == "TIMESTAMP" and self.zone:
            return "TIMESTAMP" + self.zone
        return self.text.replace(" CHAR)", ")")

    def pg(self, schema: str) -> str:
        b = self.base
        if b == "JSON":
            # jsonb, not json: Oracle's JSON type keeps a parsed (OSON) form, not the text — no
            # promise of member order or white space, as jsonb; json keeps the text as given and
            # has no equality (no DISTINCT, GROUP BY, index)
            return "jsonb"
        if b in PG_DOMAINS:
            return f"{quoted(schema)}.{PG_DOMAINS[b][0]}"
        if b == "NUMBER":
            if self.precision is None and self.scale is None:
                return "numeric"
            return f"numeric({self.precision or 38},{self.scale or 0})"
        if b == "FLOAT":
            return "numeric"
        if b in ("VARCHAR2", "NVARCHAR2"):
            return f"varchar({self.size})"
        if b in ("CHAR", "NCHAR"):
            return f"char({self.size})"
        if b == "TIMESTAMP":
            f = min(6, 6 if self.precision is None else self.precision)
            return f"timestamp({f})" + (" with time zone" if self.zone else "")
        return {"BINARY_FLOAT": "real", "BINARY_DOUBLE": "double precision", "RAW": "bytea",
                "LONG RAW": "bytea", "BOOLEAN": "boolean"}[b]

    @property
    def family(self) -> str:
        """What MODIFY may change without emptying the column first."""
        b = self.base
        return {"NVARCHAR2": "VARCHAR2", "NCHAR": "CHAR", "FLOAT": "NUMBER", "NCLOB": "CLOB"}.get(b, b)


_SIZED = {"VARCHAR2": 32767, "NVARCHAR2": 32767, "VARCHAR": 32767, "CHAR": 2000, "NCHAR": 2000, "RAW": 32767}
_ALIASES = {"INTEGER": "NUMBER", "INT": "NUMBER", "SMALLINT": "NUMBER", "DECIMAL": "NUMBER", "DEC": "NUMBER",
            "NUMERIC": "NUMBER", "VARCHAR": "VARCHAR2", "CHARACTER": "CHAR", "REAL": "FLOAT"}


def read_type(r: Reader) -> OracleType:
    t = r.peek()
    if t is None or t.kind != "id" or "." in t.text:
        raise ora(902, "" if t is None else t.text)
    name = t.word
    r.i += 1
    if name == "DOUBLE" and r.accept("PRECISION"):
        return OracleType("FLOAT", 126)
    if name == "LONG" and r.accept("RAW"):
        return OracleType("LONG RAW")
    if name == "JSON":                  # Oracle 21c's JSON type (no size: JSON(10) is ORA-00907)
        return OracleType("JSON")
    base = _ALIASES.get(name, name)
    if name in ("INTEGER", "INT", "SMALLINT"):
        return OracleType("NUMBER", 38)
    if name == "REAL":
        return OracleType("FLOAT", 63)
    if base in ("NUMBER", "FLOAT"):
        if not r.accept("("):
            return OracleType(base, 38 if name in ("DECIMAL", "DEC", "NUMERIC") else None,
                              0 if name in ("DECIMAL", "DEC", "NUMERIC") else None)
        precision = None if r.accept("*") else r.number()
        scale = r.number() if base == "NUMBER" and r.accept(",") else None
        r.expect(")")
        if precision is not None and not 1 <= precision <= (126 if base == "FLOAT" else 38):
            raise ora(1727)
        if scale is not None and not -84 <= scale <= 127:
            raise ora(1728)
        return OracleType(base, precision, scale if scale else (0 if precision is not None else scale))
    if base in _SIZED:
        if not r.accept("("):
            if base in ("CHAR", "NCHAR"):
                return OracleType(base, size=1)
            raise ora(906)
        size = r.number()
        chars = r.accept("CHAR")
        if not chars:
            r.accept("BYTE")
        r.expect(")")
        if not 1 <= size <= _SIZED[base]:
            raise ora(910)
        return OracleType(base, size=size, chars=chars)
    if base == "TIMESTAMP":
        precision = None
        if r.accept("("):
            precision = r.number()
            r.expect(")")
            if not 0 <= precision <= 9:
                raise ora(902, f"TIMESTAMP({precision})")
        zone = ""
        if r.accept("WITH", "LOCAL", "TIME", "ZONE"):
            zone = " WITH LOCAL TIME ZONE"
        elif r.accept("WITH", "TIME", "ZONE"):
            zone = " WITH TIME ZONE"
        return OracleType("TIMESTAMP", precision, zone=zone)
    if base in ("DATE", "CLOB", "NCLOB", "BLOB", "BINARY_FLOAT", "BINARY_DOUBLE", "LONG"):
        return OracleType(base)
    if base in ("BOOLEAN", "BOOL"):              # Oracle 23's SQL BOOLEAN (BOOL its synonym)
        return OracleType("BOOLEAN")
    raise ora(902, name)


@dataclass
class Constraint:
    """A constraint of the statement, inline ones made table constraints of their column."""

    kind: str                                   # PRIMARY KEY, UNIQUE, CHECK, FOREIGN KEY
    name: str | None = None
    columns: list[str] = field(default_factory=list)
    check: str | None = None
    ref: tuple[str | None, str] | None = None
    ref_columns: list[str] = field(default_factory=list)
    on_delete: str = ""
    deferrable: bool = False                    # DEFERRABLE (a foreign key's)
    deferred: bool = False                      # INITIALLY DEFERRED: checked at COMMIT
    span: tuple[int, int] = (0, 0)              # (where it is in its statement's text, its name included)


@dataclass
class Column:
    name: str
    type: OracleType | None
    default: str | None = None
    nullable: bool | None = None                # False: NOT NULL, True: NULL said, None: unsaid
    identity: str | None = None                 # ALWAYS / BY DEFAULT
    constraints: list[Constraint] = field(default_factory=list)
    type_text: str | None = None                # (a stored definition's, as written)
    collation: str | None = None                # (a stored definition's COLLATE: SQLite's CHAR columns)
    span: tuple[int, int] = (0, 0)              # (where the definition is in its statement's text)


def read_constraint(r: Reader, name: str | None, column: str | None, start: int | None = None) -> Constraint:
    """A constraint (``start``: where its text begins, its CONSTRAINT name included), with its
    state: ``[NOT] DEFERRABLE``, ``INITIALLY DEFERRED | IMMEDIATE`` in either order."""
    start = r.peek().start if start is None and r.peek() is not None else start or 0
    k = _constraint(r, name, column)
    while True:
        if r.accept("DEFERRABLE"):
            k.deferrable = True
        elif r.accept("NOT", "DEFERRABLE"):
            k.deferrable = False
        elif r.accept("INITIALLY", "DEFERRED"):
            k.deferred = k.deferrable = True
        elif not r.accept("INITIALLY", "IMMEDIATE"):
            break
    if k.deferrable and k.kind != "FOREIGN KEY":
        raise not_supported(f"a DEFERRABLE {k.kind} constraint (foreign keys only)")
    k.span = (start, r.toks[r.i - 1].end)
    return k


def _constraint(r: Reader, name: str | None, column: str | None) -> Constraint:
    if r.accept("PRIMARY", "KEY") or r.accept("UNIQUE"):
        kind = "PRIMARY KEY" if r.toks[r.i - 1].word == "KEY" else "UNIQUE"
        return Constraint(kind, name, [column] if column else r.columns())
    if r.accept("CHECK"):
        r.expect("(")
        cond = r.expression()
        r.expect(")")
        return Constraint("CHECK", name, [column] if column else [], check=cond)
    cols = [column] if column else []
    if column is None:
        r.expect("FOREIGN", "KEY")
        cols = r.columns()
    r.expect("REFERENCES")
    ref = r.qualified(942)
    ref_cols = r.columns() if r.word() == "(" else []
    on_delete = ""
    if r.accept("ON", "DELETE"):
        on_delete = "CASCADE" if r.accept("CASCADE") else "SET NULL" if r.accept("SET", "NULL") else ""
        if not on_delete:
            raise ora(905)
    return Constraint("FOREIGN KEY", name, cols, ref=ref, ref_columns=ref_cols, on_delete=on_delete)


def read_column(r: Reader, need_type: bool = True, stored: bool = False) -> Column:
    start = r.peek().start if r.peek() is not None else 0
    col = Column(r.column(), None)
    if r.word() not in CLAUSE and r.word() not in ("DEFAULT", ",", ")", ""):
        first = r.i
        try:
            col.type = read_type(r)
        except DatabaseError:
            if not stored:
                raise
            r.i = first          # a type of the database's own (TEXT, VARCHAR(20)): kept as written
            while r.word() not in CLAUSE and r.word() not in ("DEFAULT", ",", ")", ""):
                if r.accept("("):
                    r.expression()
                    r.expect(")")
                else:
                    r.i += 1
        col.type_text = r.text[r.toks[first].start:r.toks[r.i - 1].end]
    elif need_type:
        raise ora(902, r.word())
    while not r.at_end() and r.word() not in (",", ")"):
        if r.accept("DEFAULT"):
            r.accept("ON", "NULL")
            col.default = "NULL" if r.accept("NULL") else r.expression(CLAUSE)
            continue
        if r.accept("GENERATED"):
            how = "ALWAYS" if r.accept("ALWAYS") else "BY DEFAULT" if r.accept("BY", "DEFAULT") else "ALWAYS"
            r.accept("ON", "NULL")
            r.expect("AS", "IDENTITY")
            if r.word() == "(":
                r.i += 1
                r.expression()
                r.expect(")")
            col.identity = how
            continue
        if r.accept("ENABLE") or r.accept("DISABLE"):
            continue
        if stored and r.accept("COLLATE"):
            col.collation = r.word()
            r.i += 1
            continue
        begins = r.peek().start
        name = r.column() if r.accept("CONSTRAINT") else None
        if r.accept("NOT", "NULL"):
            col.nullable = False
        elif r.accept("NULL"):
            col.nullable = True
        elif r.word() in ("PRIMARY", "UNIQUE", "CHECK", "REFERENCES"):
            col.constraints.append(read_constraint(r, name, col.name, begins))
        else:
            raise ora(907) if not stored else not_supported(f"the column definition {r.rest()[:40]!r}")
    col.span = (start, r.toks[r.i - 1].end)
    return col


@dataclass
class Table:
    """CREATE TABLE's columns and constraints (also read from a stored definition on SQLite)."""

    columns: list[Column]
    constraints: list[Constraint]
    last_column_end: int = 0
    body: tuple[int, int] = (0, 0)          # (where its parenthesised body is: the "(" and the ")")


def read_stored_table(sql: str) -> Table:
    """A table's CREATE TABLE as SQLite stored it, read (its columns' spans in its text)."""
    r = Reader(sql)
    r.expect("CREATE")
    while r.word() not in ("TABLE", ""):
        r.i += 1
    r.expect("TABLE")
    r.accept("IF", "NOT", "EXISTS")
    r.i += 1
    while r.word() == ".":
        r.i += 2
    return read_table_body(r, stored=True)


def read_table_body(r: Reader, stored: bool = False) -> Table:
    opened = r.peek().start if r.peek() is not None else 0
    r.expect("(")
    columns: list[Column] = []
    constraints: list[Constraint] = []
    while True:
        if r.word() in ("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"):
            begins = r.peek().start
            name = r.column() if r.accept("CONSTRAINT") else None
            constraints.append(read_constraint(r, name, None, begins))
        else:
            columns.append(read_column(r, stored=stored))
        if not r.accept(","):
            break
    closed = r.peek().start if r.peek() is not None else 0
    r.expect(")")
    if not columns:
        raise ora(904)
    return Table(columns, constraints, columns[-1].span[1], (opened, closed))


def check_table(t: Table) -> None:
    """ORA-00957 for a column named twice, ORA-00904 for a constraint's unknown column,
    ORA-02260 for two primary keys."""
    seen: set[str] = set()
    for c in t.columns:
        if c.name in seen:
            raise ora(957, c.name)
        seen.add(c.name)
    all_constraints = t.constraints + [k for c in t.columns for k in c.constraints]
    for k in all_constraints:
        for name in k.columns:
            if name not in seen:
                raise ora(904, name)
    if sum(k.kind == "PRIMARY KEY" for k in all_constraints) > 1:
        raise ora(2260)


def quoted(name: str) -> str:
    """A name quoted for either database's statements."""
    return '"' + name.replace('"', '""') + '"'


def physical_name(name: str) -> str:
    """The database's spelling of an Oracle name (capture's mapping: ``EMP`` -> ``emp``)."""
    return name.lower() if name == name.upper() else name
