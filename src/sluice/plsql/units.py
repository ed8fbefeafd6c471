"""``CREATE [OR REPLACE] PROCEDURE / FUNCTION`` and ``DROP PROCEDURE / FUNCTION``: the text of
a stored subprogram, parsed (PL/SQL Language Reference, "CREATE PROCEDURE Statement",
"CREATE FUNCTION Statement")::

    CREATE [OR REPLACE] [EDITIONABLE | NONEDITIONABLE] {PROCEDURE | FUNCTION} [schema.]name
        [(param [IN | OUT | IN OUT] [NOCOPY] type [{:= | DEFAULT} expr], …)]
        [RETURN type]                                   -- a function's
        [AUTHID {CURRENT_USER | DEFINER} | DETERMINISTIC | PARALLEL_ENABLE | RESULT_CACHE]…
        {IS | AS} [declarations] BEGIN … [EXCEPTION …] END [name];

A unit whose text does not compile is still created, "with compilation errors", as Oracle
does: :func:`create_statement` reads its kind and name first (without one the statement is
ORA-04050 and nothing is created), then parses the rest and hands the connection the
source, the parameters and the errors (``conn.create_unit``).  The source kept is Oracle's
USER_SOURCE text: from the word PROCEDURE / FUNCTION on, so the line numbers of errors and of
``ORA-06512: at "SCOTT.P1", line 3`` count from there.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ..errors import DatabaseError, ora
from .errs import pls_error, unexpected
from .lexer import BIND, EOF, IDENT, tokenize
from .nodes import Param, Subprogram
from .parser import BlockParser, restriction

KINDS = ("PROCEDURE", "FUNCTION")
NOISE = ("EDITIONABLE", "NONEDITIONABLE")
# clauses between the header and IS / AS that change nothing here
_PLAIN_CLAUSES = ("DETERMINISTIC", "PARALLEL_ENABLE", "RESULT_CACHE")
_ERROR_AT = re.compile(r"line (\d+), column (\d+):\n(.*?)(?:\nORA-06550:|\Z)", re.S)


class UnitParser(BlockParser):
    def head(self) -> tuple[str, str, bool]:
        """``[CREATE [OR REPLACE] [EDITIONABLE]] PROCEDURE | FUNCTION name``: kind, name, OR
        REPLACE.  :raises: ORA-04050 without a name."""
        or_replace = False
        if self.accept_word("CREATE"):
            if self.accept_word("OR"):
                self.expect_word("REPLACE")
                or_replace = True
            self.accept_word(*NOISE)
        if not self.tok.is_word(*KINDS):
            raise unexpected(self.tok, ("procedure", "function"))
        kind = self.advance().value
        if self.tok.kind != IDENT:
            raise ora(4050)
        parts = [self.advance().value]
        while self.tok.is_op(".") and self.peek().kind == IDENT:
            self.advance()
            parts.append(self.advance().value)
        return kind, ".".join(parts), or_replace

    def subprogram(self) -> Subprogram:
        kind, name, or_replace = self.head()
        params, returns = self.signature(kind)
        start = self.tok
        if not self.accept_word("IS", "AS"):
            raise unexpected(self.tok, ("is", "as", "authid", "deterministic") if kind == "PROCEDURE"
                             else ("is", "as", "return", "(") if returns is None else ("is", "as"))
        if self.tok.is_word("LANGUAGE", "EXTERNAL"):
            raise restriction(self.tok, "a call specification (LANGUAGE / EXTERNAL)")
        block = self.block_body(self._declarations(), start)
        self.accept_op("/")
        if self.tok.kind != EOF:
            raise unexpected(self.tok, ("end-of-file",))
        bind = next((t for t in self.toks if t.kind == BIND), None)
        if bind is not None:        # a stored unit has no bind variables of its caller
            raise pls_error(bind.line, bind.col, f"PLS-00049: bad bind variable '{bind.text[1:]}'")
        return Subprogram(kind, name, params, returns, block, or_replace)

    def signature(self, kind: str) -> tuple[list[Param], str | None]:
        """``[(params)] [RETURN type] [clauses]`` after a subprogram's name: its parameters
        and a function's return type (a package's subprograms too: ``packages.py``)."""
        params = self._params() if self.tok.is_op("(") else []
        returns = None
        if kind == "FUNCTION":
            self.expect_word("RETURN", "(")
            returns, _, _ = self.datatype()
        self._clauses()
        return params, returns

    def _params(self) -> list[Param]:
        self.expect_op("(")
        params: list[Param] = []
        while True:
            tok = self.ident()
            mode = "IN"
            if self.accept_word("IN"):
                mode = "IN OUT" if self.accept_word("OUT") else "IN"
            elif self.accept_word("OUT"):
                mode = "OUT"
            self.accept_word("NOCOPY")
            type_name, _, _ = self.datatype()
            default = None
            if self.tok.is_op(":=") or self.tok.is_word("DEFAULT"):
                if mode != "IN":
                    raise pls_error(self.tok.line, self.tok.col, "PLS-00230: OUT and IN OUT "
                                    "formal parameters may not have default expressions")
                self.advance()
                default = self.expr()
            if any(p.name == tok.value for p in params):
                raise pls_error(tok.line, tok.col, "PLS-00410: duplicate fields in RECORD,TABLE "
                                "or argument list are not permitted")
            params.append(Param(tok.value, mode, type_name, default, tok))
            if self.accept_op(","):
                continue
            self.expect_op(")", ",", ":=", "default")
            return params

    def _clauses(self) -> None:
        while True:
            if self.accept_word("AUTHID"):
                if not self.accept_word("CURRENT_USER", "DEFINER"):
                    raise unexpected(self.tok, ("current_user", "definer"))
            elif self.accept_word(*_PLAIN_CLAUSES):
                self.accept_word("RELIES_ON")
                if self.tok.is_op("("):          # PARALLEL_ENABLE (PARTITION …), RELIES_ON (…)
                    self._skip_parens()
            elif self.tok.is_word("PIPELINED", "AGGREGATE", "ACCESSIBLE", "SHARING"):
                raise restriction(self.tok, f"{self.tok.value} in a subprogram's header")
            else:
                return


def parse_subprogram(source: str) -> Subprogram:
    """A stored subprogram's text (with or without ``CREATE [OR REPLACE]``), parsed."""
    return UnitParser(tokenize(source)).subprogram()


def error_rows(exc: DatabaseError) -> list[dict]:
    """USER_ERRORS' rows of a compilation error: line, position and text (``PLS-00103: …``)."""
    m = _ERROR_AT.search(exc.message)
    if m is None:
        return [{"line": 1, "position": 1, "text": exc.message}]
    return [{"line": int(m.group(1)), "position": int(m.group(2)), "text": m.group(3)}]


def describe(unit: Subprogram) -> list[dict]:
    """A unit's parameters as its catalog spec keeps them (USER_ARGUMENTS' facts)."""
    return [{"name": p.name, "mode": p.mode, "type": p.type_name, "default": p.default is not None}
            for p in unit.params]


def create_statement(conn: Any, text: str, compile_unit: Callable[[str, str, Any], None]) -> bool:
    """Run ``CREATE [OR REPLACE] PROCEDURE | FUNCTION``: the unit is stored whether it
    compiles or not (``conn.create_unit(kind, name, spec, or_replace)``); true when it
    compiled.  ``compile_unit(kind, name, unit)`` checks the names a parsed unit uses
    (the script layer's, which has an interpreter) and raises what does not resolve."""
    tokens = tokenize(text)
    kind, name, or_replace = UnitParser(tokens).head()
    source = stored_source(text, tokens, kind)
    spec: dict = {"source": source, "params": [], "returns": None}

    def compile_it() -> None:
        unit = parse_subprogram(source)
        spec.update(params=describe(unit), returns=unit.returns)
        compile_unit(kind, name, unit)
    conn.create_unit(kind, name, compiled_spec(spec, compile_it), or_replace)
    return not spec["errors"]


def compiled_spec(spec: dict, compile_it: Callable[[], None]) -> dict:
    """``spec`` with what ``compile_it`` raised as its USER_ERRORS rows (none: it compiled)
    and its STATUS: a unit or package is stored whether it compiles or not, as Oracle's."""
    try:
        compile_it()
        spec["errors"] = []
    except DatabaseError as exc:
        spec["errors"] = error_rows(exc)
    spec["status"] = "INVALID" if spec["errors"] else "VALID"
    return spec


def drop_statement(conn: Any, text: str) -> None:
    """``DROP PROCEDURE | FUNCTION [schema.]name`` (``conn.drop_unit(kind, name)``)."""
    parser = UnitParser(tokenize(text))
    parser.expect_word("DROP")
    kind, name, _ = parser.head()
    expect_end(parser)
    conn.drop_unit(kind, name)


def stored_source(text: str, tokens: list, word: str) -> str:
    """What a CREATE statement stores of a unit or package (USER_SOURCE's text): from its
    ``word`` (PROCEDURE, FUNCTION, PACKAGE) on, without SQL*Plus's closing ``/``."""
    start = next(t for t in tokens if t.is_word(word)).start
    return re.sub(r"\n[ \t]*/[ \t]*$", "", text[start:].rstrip()).rstrip()


def expect_end(parser: Any) -> None:
    """The end of a DROP statement: an optional ``;``, then nothing (PLS-00103 otherwise)."""
    parser.accept_op(";")
    if parser.tok.kind != EOF:
        raise unexpected(parser.tok, ("end-of-file",))
