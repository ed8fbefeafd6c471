"""``CREATE [OR REPLACE] PACKAGE [BODY]`` and ``DROP PACKAGE [BODY]``: a stored package's
text, parsed (PL/SQL Language Reference, "CREATE PACKAGE Statement", "CREATE PACKAGE BODY
Statement")::

    CREATE [OR REPLACE] [EDITIONABLE] PACKAGE [schema.]name [AUTHID …] {IS | AS}
        {declaration | PROCEDURE p [(params)]; | FUNCTION f [(params)] RETURN type;}…
    END [name];

    CREATE [OR REPLACE] [EDITIONABLE] PACKAGE BODY [schema.]name {IS | AS}
        {declaration | PROCEDURE p [(params)] {IS | AS} … END [p]; | FUNCTION …}…
    [BEGIN statements [EXCEPTION handlers]] END [name];

The declarations are a block's (variables, constants, exceptions, types, cursors); the
subprograms' headers and bodies a stored unit's (``units.py``).  As a stored unit, a package
whose text does not compile is still created, "with compilation errors": the kind and name
are read first, the rest parsed and compiled (``compile_package``), the source kept from the
word PACKAGE on (USER_SOURCE's text, line numbers counted from there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import ora
from .errs import pls_error, unexpected
from .lexer import BIND, EOF, IDENT, Token, tokenize
from .nodes import Block, Subprogram
from .parser import restriction
from .units import NOISE, UnitParser, compiled_spec, expect_end, stored_source

SPEC, BODY = "PACKAGE", "PACKAGE BODY"


@dataclass
class Member:
    """A subprogram of a package: its header in the spec, header and body in the body."""
    unit: Subprogram            # ``unit.block`` None for a header
    tok: Token                  # its name's


@dataclass
class PackageText:
    """A parsed package spec or body."""
    kind: str                   # SPEC | BODY
    name: str                   # canonical parts: 'PKG' or 'SCOTT.PKG'
    decls: list                 # variables, constants, exceptions, types, cursors
    members: list[Member] = field(default_factory=list)
    init: Block | None = None   # a body's BEGIN … section
    tok: Token | None = None    # the name's


class _PackageParser(UnitParser):
    def package_head(self) -> tuple[str, str, bool, Token]:
        """``[CREATE [OR REPLACE] [EDITIONABLE]] PACKAGE [BODY] name``: kind, name, OR
        REPLACE, the name's token.  :raises: ORA-04050 without a name."""
        or_replace = False
        if self.accept_word("CREATE"):
            if self.accept_word("OR"):
                self.expect_word("REPLACE")
                or_replace = True
            self.accept_word(*NOISE)
        self.expect_word("PACKAGE")
        kind = BODY if self.accept_word("BODY") else SPEC
        if self.tok.kind != IDENT:
            raise ora(4050)
        tok = self.tok
        parts = [self.advance().value]
        while self.tok.is_op(".") and self.peek().kind == IDENT:
            self.advance()
            parts.append(self.advance().value)
        return kind, ".".join(parts), or_replace, tok

    def package(self) -> PackageText:
        kind, name, _, tok = self.package_head()
        body = kind == BODY
        if not body:
            self._clauses()                       # AUTHID …
        if not self.accept_word("IS", "AS"):
            raise unexpected(self.tok, ("is", "as") if body else ("is", "as", "authid"))
        text = PackageText(kind, name, [], tok=tok)
        while not self.tok.is_word("END") and not (body and self.tok.is_word("BEGIN")):
            if self.tok.kind == EOF:
                raise unexpected(self.tok, ("end",))
            if self.tok.is_word("PROCEDURE", "FUNCTION"):
                member = self._member(body)
                if member is not None:
                    text.members.append(member)
            else:
                text.decls.extend(self.declaration())
        if body and self.tok.is_word("BEGIN"):
            text.init = self.block_body([], self.tok)
        else:
            self.expect_word("END")
            self._end_label()
            self.expect_op(";")
        self.accept_op("/")
        if self.tok.kind != EOF:
            raise unexpected(self.tok, ("end-of-file",))
        bind = next((t for t in self.toks if t.kind == BIND), None)
        if bind is not None:        # a stored unit has no bind variables of its caller
            raise pls_error(bind.line, bind.col, f"PLS-00049: bad bind variable '{bind.text[1:]}'")
        return text

    def _member(self, body: bool) -> Member | None:
        """A subprogram's header (``;``) or, in a body, its definition; None for a body's
        forward declaration (its definition follows)."""
        kind = self.advance().value
        tok = self.ident()
        params, returns = self.signature(kind)
        start = self.tok
        if self.accept_op(";"):
            return None if body else Member(Subprogram(kind, tok.value, params, returns, None), tok)
        if not body:
            raise unexpected(self.tok, (";",))
        if not self.accept_word("IS", "AS"):
            raise unexpected(self.tok, ("is", "as", ";"))
        if self.tok.is_word("LANGUAGE", "EXTERNAL"):
            raise restriction(self.tok, "a call specification (LANGUAGE / EXTERNAL)")
        block = self.block_body(self._declarations(), start)
        return Member(Subprogram(kind, tok.value, params, returns, block), tok)


def parse_package(source: str) -> PackageText:
    """A package spec's or body's text (with or without ``CREATE [OR REPLACE]``), parsed."""
    return _PackageParser(tokenize(source)).package()


def create_statement(conn: Any, text: str,
                     compile_package: Callable[[str, str, PackageText], None]) -> bool:
    """Run ``CREATE [OR REPLACE] PACKAGE [BODY]``: stored whether it compiles or not
    (``conn.create_package(kind, name, spec, or_replace)``); true when it compiled.
    ``compile_package(kind, name, parsed)`` raises what does not resolve."""
    tokens = tokenize(text)
    kind, name, or_replace, _ = _PackageParser(tokens).package_head()
    source = stored_source(text, tokens, "PACKAGE")
    spec = compiled_spec({"source": source}, lambda: compile_package(kind, name, parse_package(source)))
    conn.create_package(kind, name, spec, or_replace)
    return not spec["errors"]


def drop_statement(conn: Any, text: str) -> None:
    """``DROP PACKAGE [BODY] [schema.]name`` (``conn.drop_package(kind, name)``)."""
    parser = _PackageParser(tokenize(text))
    parser.expect_word("DROP")
    kind, name, _, _ = parser.package_head()
    expect_end(parser)
    conn.drop_package(kind, name)
