"""Recursive-descent parser for anonymous blocks.

The grammar is the slice of PL/SQL that administrative scripts use::

    block  := [<<label>>] [DECLARE decl…] BEGIN stmt… [EXCEPTION handler…] END [label];
    decl   := name [CONSTANT] type [NOT NULL] [:= | DEFAULT expr];
            | name EXCEPTION;  | PRAGMA EXCEPTION_INIT(name, -n);
    stmt   := call; | target := expr; | NULL; | COMMIT; | ROLLBACK; | RETURN [expr];
            | IF … ELSIF … ELSE … END IF; | [FOR i IN a..b | WHILE c] LOOP … END LOOP;
            | EXIT [WHEN c]; | CONTINUE [WHEN c]; | RAISE [name];
            | EXECUTE IMMEDIATE expr; | nested block
            | SELECT … INTO …; | INSERT / UPDATE / DELETE … [RETURNING … INTO …]; | MERGE …;  (staticsql.py)
            | FOR r IN (query) | c[(args)] LOOP …; | OPEN c; | FETCH c INTO …; | CLOSE c;
            | OPEN cv FOR query | expr [USING …];                          (refcursors.py)
    decl   += CURSOR c [(param type, …)] IS query;                          (cursors.py)
            | TYPE rc IS REF CURSOR [RETURN type];                         (refcursors.py)
            | TYPE t IS TABLE OF … | VARRAY(n) OF … | RECORD (…);            (localtypes.py)
    stmt   += FORALL i IN a..b | INDICES OF c | VALUES OF c [SAVE EXCEPTIONS] dml;  (forall.py)

Anything else stops with Oracle's PLS-00103 at the offending token, or with
PLS-00999 ("implementation restriction") for real PL/SQL Sluice does not run
(nested subprograms), so a script never half-runs
on a misreading.
"""

from __future__ import annotations

import dataclasses

from .errs import pls_error, unexpected
from .expressions import RESERVED, TokenStream
from .lexer import BIND, EOF, IDENT, NUMBER, tokenize
from .nodes import (Assign, Block, CallStmt, ExceptionDecl, ExecImmediate, Exit, Handler,
                    If, Loop, Name, PragmaInit, Raise, Return, Simple, VarDecl)
from .cursors import parse_cursor_decl, parse_cursor_stmt, parse_loop_cursor
from .refcursors import at_open_for, at_ref_cursor_type, parse_open_for, parse_ref_cursor_type
from .forall import parse_forall
from .localtypes import is_type_decl, parse_type_decl
from .staticsql import KINDS, parse_sql

STMT_START = ("begin", "case", "declare", "exit", "for", "goto", "if", "loop", "mod", "null",
              "pragma", "raise", "return", "select", "update", "while", "with",
              "<an identifier>", "<a double-quoted delimited-identifier>",
              "<a bind variable>", "<<", "continue", "close", "current", "delete", "fetch",
              "lock", "insert", "open", "rollback", "savepoint", "set", "sql", "execute",
              "commit", "forall", "merge", "pipe", "purge")
DECL_START = ("begin", "function", "pragma", "procedure", "subtype", "type",
              "<an identifier>", "<a double-quoted delimited-identifier>", "current",
              "cursor", "delete", "exists", "prior")
AFTER_NAME = (":=", ".", "(", "@", "%", ";")
# Real PL/SQL that this interpreter deliberately does not run.
_UNSUPPORTED_STMT = frozenset("""CASE GOTO
    SAVEPOINT SET LOCK PIPE WITH""".split())
_UNSUPPORTED_DECL = frozenset("TYPE SUBTYPE PROCEDURE FUNCTION".split())


def restriction(tok, what: str):
    return pls_error(tok.line, tok.col, "PLS-00999: implementation restriction (may be "
                     f"temporary) {what} is not supported by the Sluice interpreter")


class BlockParser(TokenStream):
    def block(self) -> Block:
        start = self.tok
        label = self._label()
        decls = []
        if self.accept_word("DECLARE"):
            decls = self._declarations()
        elif not self.tok.is_word("BEGIN"):
            raise unexpected(self.tok, ("begin", "declare"))
        return self.block_body(decls, start, label)

    def block_body(self, decls: list, start, label: str | None = None) -> Block:
        """``BEGIN … [EXCEPTION …] END [label];`` after the declarations (a stored
        subprogram's come after its IS / AS: ``units.py``)."""
        self.expect_word("BEGIN")
        body = self._statements(("EXCEPTION", "END"))
        handlers = self._handlers() if self.accept_word("EXCEPTION") else []
        self.expect_word("END", "exception")
        self._end_label()
        self.expect_op(";", "<an identifier>")
        return Block(decls, body, handlers, start, label)

    def _label(self) -> str | None:
        if not self.accept_op("<<"):
            return None
        name = self.ident().value
        self.expect_op(">>")
        return name

    def _end_label(self) -> None:
        if self.tok.kind == IDENT and not self.tok.is_word(*RESERVED):
            self.advance()

    # -- declarations
    def _declarations(self) -> list:
        decls: list = []
        while not self.tok.is_word("BEGIN"):
            decls.extend(self.declaration())
        return decls

    def declaration(self) -> list:
        """One declaration (none for a PRAGMA that changes nothing; a package's items are
        these and subprograms: ``packages.py``)."""
        tok = self.tok
        if tok.kind != IDENT:
            raise unexpected(tok, DECL_START)
        if self.accept_word("PRAGMA"):
            return self._pragma()
        if tok.is_word("CURSOR"):
            return [parse_cursor_decl(self)]
        if at_ref_cursor_type(self):              # TYPE rc IS REF CURSOR (refcursors.py)
            return [parse_ref_cursor_type(self)]
        if is_type_decl(self):
            return [parse_type_decl(self)]
        if tok.is_word(*_UNSUPPORTED_DECL):
            raise restriction(tok, f"a {tok.value} declaration")
        name = self.advance()
        constant = bool(self.accept_word("CONSTANT"))
        if not constant and self.accept_word("EXCEPTION"):
            self.expect_op(";")
            return [ExceptionDecl(name.value, name)]
        at = self.pos
        type_name, first, last = self.datatype()
        # v2 v%TYPE: anchored to a variable (of a declared type, the resolver finds)
        anchor = first.value if last.is_word("TYPE") and self.toks[at + 1].is_op("%") \
            and type_name is None else None
        if self.accept_word("NOT"):
            self.expect_word("NULL")
        default = None
        if self.accept_op(":=") or self.accept_word("DEFAULT"):
            default = self.expr()
        elif constant:
            raise pls_error(name.line, name.col, "PLS-00322: declaration of a constant "
                            f"'{name.value}' must contain an initialization assignment")
        self.expect_op(";", ":=", "default", "not")
        return [VarDecl(name.value, type_name, constant, default, name,
                        rowtype=type_name is None and last.is_word("ROWTYPE"), anchor=anchor)]

    def _pragma(self) -> list:
        tok = self.ident("exception_init", "autonomous_transaction")
        if tok.value == "EXCEPTION_INIT":
            self.expect_op("(")
            name = self.ident().value
            self.expect_op(",")
            sign = -1 if self.accept_op("-") else 1
            if self.tok.kind != NUMBER:
                raise unexpected(self.tok, ("-", "<a number>"))
            code = sign * int(self.advance().value)
            self.expect_op(")")
            self.expect_op(";")
            return [PragmaInit(name, code, tok)]
        if tok.value in ("AUTONOMOUS_TRANSACTION", "SERIALLY_REUSABLE"):
            # Every block already runs in the caller's session; nothing to change.
            self.expect_op(";")
            return []
        raise restriction(tok, f"PRAGMA {tok.value}")

    # -- statements
    def _statements(self, enders: tuple[str, ...]) -> list:
        if self.tok.is_word(*enders) or self.tok.kind == EOF:
            raise unexpected(self.tok, STMT_START)
        stmts = []
        while not self.tok.is_word(*enders):
            if self.tok.kind == EOF:
                raise unexpected(self.tok, STMT_START[:13] + tuple(e.lower() for e in enders))
            stmts.append(self._statement())
        return stmts

    def _statement(self):
        tok = self.tok
        if tok.is_op("<<"):
            save = self.pos
            label = self._label()
            if self.tok.is_word("DECLARE", "BEGIN"):
                self.pos = save          # the block reads its own label
                return self.block()
            stmt = self._statement()
            if isinstance(stmt, Loop):
                stmt.label = label
            return stmt
        if tok.kind == BIND:
            return self._assignment_or_call()
        if tok.kind != IDENT:
            raise unexpected(tok, STMT_START)
        word = "" if tok.quoted else tok.value
        if word in ("DECLARE", "BEGIN"):
            return self.block()
        if word in ("NULL", "RETURN"):
            self.advance()
            if word == "RETURN" and not self.tok.is_op(";"):     # a function's value
                value = self.expr()
                self.expect_op(";")
                return Return(value, tok)
            self.expect_op(";")
            return Simple(word, tok)
        if word in ("COMMIT", "ROLLBACK"):
            self.advance()
            self.accept_word("WORK")
            if self.tok.is_word("TO"):
                raise restriction(self.tok, "ROLLBACK TO SAVEPOINT")
            self.expect_op(";", "work")
            return Simple(word, tok)
        if word == "IF":
            return self._if()
        if word in ("FOR", "WHILE", "LOOP"):
            return self._loop()
        if word in ("EXIT", "CONTINUE"):
            self.advance()
            label = self.advance().value if self.tok.kind == IDENT and not \
                self.tok.is_word("WHEN") else None
            when = self.expr() if self.accept_word("WHEN") else None
            self.expect_op(";", "when")
            return Exit(word, label, when, tok)
        if word == "RAISE":
            self.advance()
            if self.accept_op(";"):
                return Simple("RAISE", tok)
            name = self._exception_name()
            self.expect_op(";")
            return Raise(name.value, name)
        if word == "EXECUTE" and self.peek().is_word("IMMEDIATE"):
            self.advance()
            self.advance()
            sql = self.expr()
            if self.tok.is_word("USING", "INTO", "RETURNING"):
                raise restriction(self.tok, f"EXECUTE IMMEDIATE … {self.tok.value}")
            self.expect_op(";", "using", "into")
            return ExecImmediate(sql, tok)
        if word in KINDS:
            return parse_sql(self)
        if word == "OPEN" and at_open_for(self):   # a cursor variable's (refcursors.py)
            return parse_open_for(self)
        if word == "FORALL":
            return parse_forall(self)
        if word in ("OPEN", "FETCH", "CLOSE"):
            return parse_cursor_stmt(self)
        if word in _UNSUPPORTED_STMT:
            raise restriction(tok, f"a {word} statement inside a block")
        if tok.is_word(*RESERVED):
            raise unexpected(tok, STMT_START)
        return self._assignment_or_call()

    def _assignment_or_call(self):
        tok = self.tok
        target: Name = self.name(bind=tok.kind == BIND)
        if self.accept_op(":="):
            if any(seg.args is not None and not _subscript(seg) for seg in target.segs[1:]):
                raise restriction(tok, "assigning to the result of a call")
            value = self.expr()
            self.expect_op(";", ".", "(", "*", "%", "&", "-", "+", "/", "||", "mod")
            return Assign(target, value, tok)
        if target.bind:
            raise unexpected(self.tok, (":=", ".", "("))
        self.expect_op(";", *AFTER_NAME[:-1])
        return CallStmt(target, tok)

    def _if(self) -> If:
        tok = self.advance()
        branches = []
        cond = self.expr()
        self.expect_word("THEN", "and", "or")
        branches.append((cond, self._statements(("ELSIF", "ELSE", "END"))))
        otherwise = None
        while True:
            if self.accept_word("ELSIF"):
                cond = self.expr()
                self.expect_word("THEN", "and", "or")
                branches.append((cond, self._statements(("ELSIF", "ELSE", "END"))))
            elif self.accept_word("ELSE"):
                otherwise = self._statements(("END",))
                break
            else:
                break
        self.expect_word("END", "elsif", "else")
        self.expect_word("IF")
        self.expect_op(";")
        return If(branches, otherwise, tok)

    def _loop(self) -> Loop:
        tok = self.advance()
        loop = Loop([], tok)
        if tok.value == "FOR":
            loop.var = self.ident().value
            self.expect_word("IN")
            loop.reverse = bool(self.accept_word("REVERSE"))
            loop.cursor = None if loop.reverse else parse_loop_cursor(self)
            if loop.cursor is None:
                loop.low = self.expr()
                self.expect_op("..")
                loop.high = self.expr()
        elif tok.value == "WHILE":
            loop.while_cond = self.expr()
        if tok.value != "LOOP":
            self.expect_word("LOOP", "and", "or")
        loop.body = self._statements(("END",))
        self.expect_word("END")
        self.expect_word("LOOP")
        self._end_label()
        self.expect_op(";")
        return loop

    def _exception_name(self):
        """``e`` or ``pkg.e`` (a package's exception: ``packages.py``); the token of
        the first part, its value the dotted name."""
        tok = self.ident()
        parts = [tok.value]
        while self.tok.is_op(".") and self.peek().kind == IDENT:
            self.advance()
            parts.append(self.advance().value)
        return tok if len(parts) == 1 else dataclasses.replace(tok, value=".".join(parts))

    def _handlers(self) -> list[Handler]:
        handlers = []
        while self.tok.is_word("WHEN"):
            tok = self.advance()
            names = [self._exception_name().value]
            while self.accept_word("OR"):
                names.append(self._exception_name().value)
            self.expect_word("THEN", "or")
            handlers.append(Handler(names, self._statements(("WHEN", "END")), tok))
        if not handlers:
            raise unexpected(self.tok, ("pragma", "when"))
        return handlers


def _subscript(seg) -> bool:
    """``part(i)``: one positional argument, an element of a collection (``r.f(i) := x``)."""
    return seg.args is not None and len(seg.args) == 1 and seg.args[0].name is None


def parse_block(text: str) -> Block:
    """Parse one anonymous block; a trailing ``/`` line (SQL*Plus's "run") is allowed."""
    parser = BlockParser(tokenize(text))
    block = parser.block()
    parser.accept_op("/")
    if parser.tok.kind != EOF:
        raise unexpected(parser.tok, ("end-of-file",))
    return block
