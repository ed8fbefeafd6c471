"""``CREATE [OR REPLACE] TYPE`` (object, varray, nested table) and ``DROP TYPE``.

Attribute names and datatypes are handed to the connection *as written*
(``'VARCHAR2(30)'``, ``'NUMBER(10,2)'``, ``'address_t'``): the type system,
not the parser, decides what a datatype means.
"""

from __future__ import annotations

from .errs import unexpected
from .expressions import TokenStream
from .lexer import EOF, IDENT, NUMBER, tokenize
from .nodes import CreateType, DropType
from .parser import restriction

# An object type spec may end with these modifiers; they change nothing here.
_MODIFIERS = ("FINAL", "INSTANTIABLE", "PERSISTABLE")
# Words that start a method declaration inside an object type spec.
_METHOD_WORDS = ("MEMBER", "STATIC", "MAP", "ORDER", "CONSTRUCTOR", "OVERRIDING", "FINAL",
                 "NOT", "INSTANTIABLE")


class _TypeParser(TokenStream):
    def __init__(self, text: str) -> None:
        super().__init__(tokenize(text))
        self.text = text

    def qualified_name(self) -> str:
        parts = [self.ident().value]
        while self.accept_op("."):
            parts.append(self.ident().value)
        return ".".join(parts)

    def written_type(self) -> str:
        """A datatype exactly as written, e.g. ``'NUMBER(7,2)'`` or ``'strmadmin.addr_t'``."""
        _, first, last = self.datatype()
        return self.text[first.start:last.end]

    def create(self) -> CreateType:
        self.expect_word("CREATE")
        or_replace = False
        if self.accept_word("OR"):
            self.expect_word("REPLACE")
            or_replace = True
        self.accept_word("EDITIONABLE", "NONEDITIONABLE")
        self.expect_word("TYPE")
        if self.tok.is_word("BODY"):
            raise restriction(self.tok, "CREATE TYPE BODY")
        name = self.qualified_name()
        self.accept_word("FORCE")
        if self.accept_word("OID"):
            self.advance()
        if self.accept_word("AUTHID") and not self.accept_word("CURRENT_USER", "DEFINER"):
            raise unexpected(self.tok, ("current_user", "definer"))
        if self.tok.is_word("UNDER"):
            raise restriction(self.tok, "a subtype (UNDER)")
        if not self.accept_word("AS", "IS"):
            raise unexpected(self.tok, ("as", "is", "authid", "force", "oid", "under"))
        if self.accept_word("OBJECT"):
            node = CreateType(name, "OBJECT", self._attributes(), None, None, or_replace)
            while self.tok.is_word("NOT", *_MODIFIERS):
                if self.accept_word("NOT") and not self.tok.is_word(*_MODIFIERS):
                    raise unexpected(self.tok, ("final", "instantiable", "persistable"))
                self.advance()
        elif self.tok.is_word("VARRAY", "VARYING"):
            if self.advance().value == "VARYING":
                self.expect_word("ARRAY")
            self.expect_op("(")
            if self.tok.kind != NUMBER:
                raise unexpected(self.tok, ("<an integer>",))
            size = int(self.advance().value)
            self.expect_op(")")
            self.expect_word("OF")
            node = CreateType(name, "VARRAY", None, self._element(), size, or_replace)
        elif self.accept_word("TABLE"):
            self.expect_word("OF")
            node = CreateType(name, "TABLE", None, self._element(), None, or_replace)
        else:
            raise unexpected(self.tok, ("object", "table", "varray", "varying"))
        self._end()
        return node

    def _attributes(self) -> list[tuple[str, str]]:
        self.expect_op("(")
        attrs = []
        while True:
            if self.tok.is_word(*_METHOD_WORDS):
                raise restriction(self.tok, "a method in an object type")
            name = self.ident()
            attrs.append((name.text, self.written_type()))
            if self.accept_op(","):
                continue
            self.expect_op(")", ",")
            return attrs

    def _element(self) -> str:
        element = self.written_type()
        if self.accept_word("NOT"):
            self.expect_word("NULL")
        return element

    def drop(self) -> DropType:
        self.expect_word("DROP")
        self.expect_word("TYPE")
        if self.tok.is_word("BODY"):
            raise restriction(self.tok, "DROP TYPE BODY")
        name = self.qualified_name()
        force = bool(self.accept_word("FORCE"))
        if not force:
            self.accept_word("VALIDATE")
        self._end()
        return DropType(name, force)

    def _end(self) -> None:
        """An optional ``;`` and/or ``/`` and then nothing."""
        self.accept_op(";")
        self.accept_op("/")
        if self.tok.kind != EOF:
            raise unexpected(self.tok, (";",) if self.tok.kind == IDENT else ("end-of-file",))


def parse_create_type(text: str) -> CreateType:
    return _TypeParser(text).create()


def parse_drop_type(text: str) -> DropType:
    return _TypeParser(text).drop()
