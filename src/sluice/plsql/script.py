"""SQL*Plus scripts: splitting them into statements and dispatching each one.

SQL*Plus's own rules decide where a statement ends: PL/SQL units (blocks and
``CREATE TYPE/PROCEDURE/FUNCTION/PACKAGE/TRIGGER``) run until a line holding
only ``/``; other SQL ends at ``;`` outside quotes and comments (or at a ``/``
line); SQL*Plus commands (SET, PROMPT, EXEC, CONNECT …) are one line each,
continued by a trailing ``-``.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import dpy, ora
from .binds import bind_headings, bind_values, placeholders
from .ddl import parse_create_type, parse_drop_type
from .interpreter import Interpreter
from .parser import parse_block
from . import packagetext
from .packages import compile_created as compile_package_created
from .subprograms import compile_created
from .units import create_statement, drop_statement
from .values import SESSION_NLS


@dataclass
class StatementResult:
    """What one statement produced.  ``kind`` is 'query', 'block', 'ddl', 'dml',
    'tcl' or 'sqlplus'; ``output`` holds DBMS_OUTPUT and PROMPT lines."""
    kind: str
    columns: list[str] | None = None
    rows: list[tuple] = field(default_factory=list)
    rowcount: int = 0
    output: list[str] = field(default_factory=list)
    # a query's python-oracledb cursor.description, when the store gives one
    description: list[tuple] | None = None
    # a block's DBMS_SQL.RETURN_RESULT cursors (plsql/refcursors.py), for getimplicitresults()
    implicit: list = field(default_factory=list)
    # python-oracledb's cursor.warning: a PL/SQL unit created with compilation errors
    warning: Any = None


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_$#]*|<<|@@?|/|\S")
_SQLPLUS = frozenset("""SET SHOW SHO PROMPT PRO REM REMARK SPOOL SPO WHENEVER EXEC EXECUTE
    CONNECT CONN DISCONNECT DISC COLUMN COL TTITLE BTITLE BREAK CLEAR DEFINE DEF UNDEFINE
    PAUSE TIMING EXIT QUIT @ @@ START STA""".split())
_IGNORED = _SQLPLUS - {"PROMPT", "PRO", "EXEC", "EXECUTE", "CONNECT", "CONN", "@", "@@",
                       "START", "STA"}
# ``SET TRANSACTION`` and friends are SQL, not the SQL*Plus SET command.
_SQL_AFTER_SET = frozenset({"TRANSACTION", "ROLE", "CONSTRAINT", "CONSTRAINTS"})
_PLSQL_UNITS = frozenset({"TYPE", "PROCEDURE", "FUNCTION", "PACKAGE", "TRIGGER", "LIBRARY"})
_CREATE_NOISE = ("OR", "REPLACE", "EDITIONABLE", "NONEDITIONABLE", "FORCE", "NOFORCE")
# what a CREATE / ALTER / DROP statement makes: modifiers, then one object noun (two for
# DATABASE LINK, PACKAGE BODY, TYPE BODY) -- the word after it is a name, whatever it
# spells (CREATE ROLE public, DROP USER system)
_OBJECT_MODIFIERS = frozenset("PUBLIC SHARED GLOBAL PRIVATE TEMPORARY UNIQUE BITMAP MATERIALIZED".split())
_OBJECT_WORDS = frozenset("""DATABASE USER ROLE TABLE VIEW INDEX SEQUENCE SYNONYM TYPE PACKAGE
    PROCEDURE FUNCTION TRIGGER DIRECTORY TABLESPACE PROFILE SESSION SYSTEM CONTEXT LIBRARY""".split())
_OBJECT_SECOND_WORD = {"DATABASE": "LINK", "PACKAGE": "BODY", "TYPE": "BODY"}


def leading_words(text: str, start: int = 0, count: int = 6) -> tuple[list[str], int]:
    """The first ``count`` words (upper-cased) after whitespace and comments, and where
    the first one starts (``len(text)`` if there is none)."""
    i = _skip_blank(text, start)
    words = [m.group().upper() for m in _WORD.finditer(_strip_comments(text[i:i + 400]))]
    return words[:count], i


def _strip_comments(text: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?(\*/|$)", " ", text, flags=re.DOTALL)


def _skip_blank(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        else:
            break
    return i


def _category(words: list[str]) -> str:
    """'sqlplus', 'plsql' (ends at a / line) or 'sql' (ends at ;)."""
    if not words:
        return "sql"
    first = words[0]
    if first in ("DECLARE", "BEGIN", "<<"):
        return "plsql"
    if first == "SET" and len(words) > 1 and words[1] in _SQL_AFTER_SET:
        return "sql"
    if first in ("EXEC", "EXECUTE") and len(words) > 1 and words[1] == "IMMEDIATE":
        return "sql"
    if first in _SQLPLUS:
        return "sqlplus"
    if first == "CREATE":
        rest = [w for w in words[1:] if w not in _CREATE_NOISE]
        if rest and rest[0] in _PLSQL_UNITS:
            return "plsql"
    return "sql"


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$#"


def _skip_string(text: str, i: int, start: int) -> int:
    """Index after the literal whose opening quote is at ``i`` (q-quotes included)."""
    prev = text[i - 1] if i > start else ""
    before = text[i - 2] if i - 1 > start else ""
    if prev in ("q", "Q") and (not _is_ident_char(before) or before in "nN") \
            and i + 1 < len(text):
        closer = {"[": "]", "{": "}", "(": ")", "<": ">"}.get(text[i + 1], text[i + 1])
        end = text.find(closer + "'", i + 2)
        return len(text) if end < 0 else end + 2
    j = i + 1
    while True:
        j = text.find("'", j)
        if j < 0:
            return len(text)            # unterminated: the parser reports it
        if text.startswith("''", j):
            j += 2
            continue
        return j + 1


def _find_end(text: str, start: int, plsql: bool) -> tuple[int, int]:
    """(end of the statement, where scanning resumes)."""
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            nl = text.find("\n", i + 1)
            nl = n if nl < 0 else nl
            if text[i + 1:nl].strip() == "/":
                return i, nl + 1
            i += 1
        elif text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif ch == "'":
            i = _skip_string(text, i, start)
        elif ch == '"':
            close = text.find('"', i + 1)
            i = n if close < 0 else close + 1
        elif ch == ";" and not plsql:
            return i, i + 1
        else:
            i += 1
    return n, n


def split_with_lines(text: str) -> list[tuple[int, str]]:
    """The statements of a script, each with the 1-based line it starts on."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while True:
        words, i = leading_words(text, i)
        if i >= n:
            return out
        line_start = text.rfind("\n", 0, i) + 1
        nl = text.find("\n", i)
        line_end = n if nl < 0 else nl
        # keep the first line's indentation, so columns match the script's
        begin = line_start if not text[line_start:i].strip() else i
        if text[i:line_end].strip() == "/":           # "run again" after a ;-statement
            i = line_end + 1
            continue
        category = _category(words)
        if category == "sqlplus":
            end = line_end
            while words[0] not in ("REM", "REMARK") and end < n \
                    and text[i:end].rstrip().endswith("-"):             # continued line
                nl = text.find("\n", end + 1)
                end = n if nl < 0 else nl
            stmt, i = text[begin:end], end + 1
        else:
            end, i = _find_end(text, i, category == "plsql")
            stmt = text[begin:end]
        if stmt.strip():                              # a stray ";" runs nothing
            out.append((text.count("\n", 0, begin) + 1, stmt.rstrip()))


def split_script(text: str) -> list[str]:
    """Split a SQL*Plus script into its statements (terminators removed, except the
    ``END;`` that belongs to a PL/SQL unit)."""
    return [stmt for _, stmt in split_with_lines(text)]


def run_script(conn: Any, text: str) -> list[StatementResult]:
    """Run every statement in order; the first error stops the script and is re-raised."""
    results = []
    for line, stmt in split_with_lines(text):
        try:
            results.append(execute(conn, stmt))
        except Exception as exc:
            exc.add_note(f"while running the statement at line {line} of the script")
            raise
        if leading_words(stmt, 0, 1)[0] in (["EXIT"], ["QUIT"]):
            break
    return results


def _strip_run_line(text: str) -> str:
    """Drop surrounding blanks and a trailing ``/`` line (SQL*Plus's "run")."""
    text = text.strip()
    return text[:-1].rstrip() if text.endswith("\n/") or text == "/" else text


def _strip_terminator(text: str) -> str:
    text = _strip_run_line(text)
    return text[:-1].rstrip() if text.endswith(";") else text


def statement_bind_names(text: str) -> list[str]:
    """python-oracledb's ``cursor.bindnames()`` of ``text``: its bind names, each once in the
    order they first appear, upper-cased (none in DDL)."""
    words, _ = leading_words(text, count=1)
    return list(dict.fromkeys(placeholders(text, words[0] if words else "")))


def execute(conn: Any, text: str, binds: dict | Sequence | None = None) -> StatementResult:
    """Run one statement (a block, EXEC, type DDL, query, COMMIT/ROLLBACK, SQL*Plus
    command, or other SQL handed to the connection).  ``binds`` are values by name (a
    dict) or by position (a list), matched as python-oracledb matches them (binds.py)."""
    words, start = leading_words(text)
    if not words:
        raise ora(900)
    first = words[0]
    original = text
    text, binds = bind_values(text, first, binds)
    category = _category(words)
    if category == "sqlplus":
        return _sqlplus(conn, first, text[start:], binds)
    if first in ("DECLARE", "BEGIN", "<<"):
        return _block(conn, text, binds)
    created = [w for w in words[1:] if w not in _CREATE_NOISE] if first == "CREATE" else []
    if created[:1] == ["TYPE"] and created[1:2] != ["BODY"]:
        return _create_type(conn, text)
    # (optional hooks: without them, other SQL below)
    units = first in ("CREATE", "DROP") and hasattr(conn, "create_unit")
    if units and created[:1] in (["PROCEDURE"], ["FUNCTION"]):
        return _create_unit(conn, text)
    if units and first == "DROP" and words[1:2] in (["PROCEDURE"], ["FUNCTION"]):
        drop_statement(conn, text)
        return StatementResult("ddl")
    if first in ("CREATE", "DROP") and hasattr(conn, "create_package") and \
            (created[:1] if first == "CREATE" else words[1:2]) == ["PACKAGE"]:
        return _package_ddl(conn, text, first)
    if first == "CALL":
        return _call(conn, text[start:], binds)
    if first == "DROP" and words[1:2] == ["TYPE"] and words[2:3] != ["BODY"]:
        node = parse_drop_type(text)
        conn.drop_type(node.name, node.force)
        return StatementResult("ddl")
    if first in ("SELECT", "WITH") or (first == "(" and "SELECT" in words):
        columns, rows = conn.query(_strip_terminator(text), binds or {})
        rows = [tuple(r) for r in rows]
        description = getattr(columns, "description", None)
        headings = bind_headings(original, text, list(columns))
        if description is not None:
            description = [(h, *d[1:]) for h, d in zip(headings, description)]
        return StatementResult("query", headings, rows, len(rows), description=description)
    if first in ("INSERT", "UPDATE", "DELETE", "MERGE") and hasattr(conn, "execute_dml"):
        count = conn.execute_dml(_strip_terminator(text), binds or {})
        return StatementResult("dml", rowcount=count)
    if first in ("COMMIT", "ROLLBACK") and words[1:] in ([], ["WORK"], [";"], ["WORK", ";"]):
        conn.commit() if first == "COMMIT" else conn.rollback()
        return StatementResult("tcl")
    # a PL/SQL unit's own "END;" belongs to it; other SQL loses its terminator
    return _other_sql(conn, words, _strip_run_line(text) if category == "plsql"
                      else _strip_terminator(text))


def _block(conn: Any, text: str, binds: dict | None) -> StatementResult:
    output: list[str] = []
    # The parser and the interpreter recurse as the block nests: hundreds of nested blocks,
    # IFs or parentheses (or a procedure calling itself for ever) exhaust Python's stack.
    # Oracle's answers: PLS-00123 for a unit too large to compile, ORA-06500 at run time.
    try:
        block = parse_block(text)
    except RecursionError:
        raise ora(6550, 1, 1, "PLS-00123: program too large (nested too deeply)") from None
    # a statement is atomic (the connection's ``statement`` hook): one that fails undoes
    # its own work, not the transaction's earlier work
    hook = getattr(conn, "statement", None)
    interpreter = Interpreter(conn, binds, output, execute)
    nls = SESSION_NLS.set(getattr(conn, "session_nls", None))     # its conversions in the session's NLS_…
    with hook() if hook is not None else contextlib.nullcontext():
        try:
            interpreter.run(block)
        except RecursionError:
            raise ora(6500) from None
        finally:
            SESSION_NLS.reset(nls)
    return StatementResult("block", output=output, implicit=interpreter.returned)


def _create_type(conn: Any, text: str) -> StatementResult:
    node = parse_create_type(text)
    conn.create_type(node.name, node.kind, node.attributes, node.element_type, node.max_size,
                     node.or_replace)
    return StatementResult("ddl")


def _create_unit(conn: Any, text: str) -> StatementResult:
    """CREATE PROCEDURE / FUNCTION: stored, compiled or not (then python-oracledb's warning)."""
    def compile_unit(kind: str, name: str, unit: Any) -> None:
        compile_created(Interpreter(conn, {}, [], execute), kind, name, unit)
    if create_statement(conn, text, compile_unit):
        return StatementResult("ddl")
    return StatementResult("ddl", warning=dpy(7000).args[0])


def _package_ddl(conn: Any, text: str, first: str) -> StatementResult:
    """CREATE PACKAGE [BODY] (stored, compiled or not) and DROP PACKAGE [BODY]."""
    if first == "DROP":
        packagetext.drop_statement(conn, text)
        return StatementResult("ddl")
    def compile_package(kind: str, name: str, package: Any) -> None:
        compile_package_created(Interpreter(conn, {}, [], execute), kind, name, package)
    if packagetext.create_statement(conn, text, compile_package):
        return StatementResult("ddl")
    return StatementResult("ddl", warning=dpy(7000).args[0])


_CALL = re.compile(r'CALL\s+(.+?\))(?:\s+INTO\s+(:\w+|:"[^"]+"))?\s*;?\s*$', re.I | re.S)


def _call(conn: Any, text: str, binds: dict | None) -> StatementResult:
    """SQL's ``CALL routine(args) [INTO :bind]``: the block ``BEGIN [:bind :=] routine(args);
    END;`` (its parentheses are not optional).  :raises: ORA-06576 for anything else."""
    m = _CALL.match(text.strip())
    if m is None:
        raise ora(6576)
    call, into = m.groups()
    result = _block(conn, f"BEGIN {into} := {call}; END;" if into else f"BEGIN {call}; END;", binds)
    return StatementResult("block", output=result.output)


def _sqlplus(conn: Any, command: str, text: str, binds: dict | None) -> StatementResult:
    # a trailing "-" continues a SQL*Plus command on the next line
    line = re.sub(r"-[ \t]*\r?\n", " ", text).strip()
    rest = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
    if command in ("PROMPT", "PRO"):
        return StatementResult("sqlplus", output=[rest])
    if command in ("EXEC", "EXECUTE"):
        call = rest.rstrip().rstrip(";").rstrip()
        # SQL*Plus runs "BEGIN <call>; END;" — positions in errors count from that text
        result = _block(conn, f"BEGIN {call}; END;", binds)
        return StatementResult("sqlplus", output=result.output)
    if command in ("CONNECT", "CONN"):
        user, password = _connect_args(rest)
        if re.search(r"\s+as\s+sysdba\s*;?\s*$", rest, re.I):
            conn.sqlplus_connect(user, password, as_sysdba=True)
        else:
            conn.sqlplus_connect(user, password)
        return StatementResult("sqlplus")
    if command in _IGNORED:
        return StatementResult("sqlplus")
    raise ora(900)                         # @file / START: Sluice runs no script files


def _connect_args(rest: str) -> tuple[str | None, str | None]:
    """``user/password[@db] [AS SYSDBA]`` -> (user, password); either may be None."""
    rest = re.sub(r"\s+as\s+\w+\s*;?\s*$", "", rest.rstrip().rstrip(";"), flags=re.I).strip()
    credentials = rest.split("@", 1)[0]
    user, _, password = credentials.partition("/")
    return (user.strip() or None), (password.strip() or None)


def _kind_words(words: list[str]) -> str:
    """'CREATE DATABASE LINK', 'CREATE USER', 'GRANT', 'ALTER SESSION' …"""
    verb = words[0]
    if verb not in ("CREATE", "ALTER", "DROP", "TRUNCATE"):
        return verb
    kind = [verb]
    rest = iter(words[1:])
    for word in rest:
        if word in _CREATE_NOISE:
            continue
        if word in _OBJECT_MODIFIERS:
            kind.append(word)
            continue
        if word in _OBJECT_WORDS:
            kind.append(word)
            second = _OBJECT_SECOND_WORD.get(word)
            if second is not None and next(rest, None) == second:
                kind.append(second)
        break
    return " ".join(kind)


def _other_sql(conn: Any, words: list[str], text: str) -> StatementResult:
    hook = getattr(conn, "execute_sql_statement", None)
    if hook is None:
        raise ora(900)
    result = hook(_kind_words(words), text)
    if isinstance(result, StatementResult):
        return result
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], list):
        rows = [tuple(r) for r in result[1]]
        return StatementResult("query", list(result[0]), rows, len(rows))
    kind = "dml" if words[0] in ("INSERT", "UPDATE", "DELETE", "MERGE") else \
        "tcl" if words[0] in ("SAVEPOINT", "ROLLBACK", "SET") else "ddl"
    return StatementResult(kind, rowcount=result if isinstance(result, int) else 0)
