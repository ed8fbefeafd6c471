"""The types a block declares (``TYPE name IS …;``): parsing, resolving, and the run-time
types their variables' values are made of (``composites.py``)::

    TYPE t IS TABLE OF element [NOT NULL];                          -- nested table
    TYPE t IS {VARRAY | VARYING ARRAY} (n) OF element [NOT NULL];   -- VARRAY
    TYPE t IS TABLE OF element [NOT NULL] INDEX BY {PLS_INTEGER | BINARY_INTEGER
                                                  | VARCHAR2(n) | …};   -- associative array
    TYPE r IS RECORD (field element [NOT NULL] [{:= | DEFAULT} expr], …);

``element`` is a scalar datatype, ``x%TYPE``, ``x%ROWTYPE`` (a record of a table's or a
cursor's columns) or a type declared before it in the block or an enclosing one.  A
``REF CURSOR`` type is the cursor variables' (not run here: PLS-00999).

A declared type is a name in the block's scope like a variable: the resolver links each
variable (and element) to the declaration, and when the block runs the type's run-time
object is kept in the block's environment under its name.
"""

from __future__ import annotations

from typing import Any, Callable

from .errs import pls_error, semantic_error, unexpected
from .lexer import NUMBER
from .nodes import ElementRef, FieldDecl, TypeDecl
from .composites import CollectionType, RecordType, RowType, ScalarType

# INDEX BY these: integer keys (the rest, VARCHAR2(n) & co, are strings)
_INTEGER_KEYS = frozenset("""PLS_INTEGER BINARY_INTEGER SIMPLE_INTEGER NATURAL NATURALN
    POSITIVE POSITIVEN SIGNTYPE INTEGER INT SMALLINT""".split())


# ------------------------------------------------------------------- parsing
def is_type_decl(parser: Any) -> bool:
    """``TYPE name IS`` at the parser's token (else ``type`` names a variable)."""
    return parser.tok.is_word("TYPE") and parser.peek(2).is_word("IS", "AS")


def parse_type_decl(parser: Any, ref_cursor: Callable[[Any], Any] | None = None) -> TypeDecl:
    """``TYPE name IS …;`` (at ``TYPE``).  ``ref_cursor(parser)`` parses a ``REF CURSOR``
    type (at ``REF``) where the block runs cursor variables."""
    parser.advance()
    name = parser.ident()
    parser.advance()                                      # IS / AS
    tok = parser.tok
    if parser.accept_word("RECORD"):
        decl = TypeDecl(name.value, "RECORD", name, fields=_fields(parser))
    elif parser.accept_word("TABLE"):
        parser.expect_word("OF")
        element = _element(parser)
        decl = TypeDecl(name.value, "TABLE", name, element)
        if parser.accept_word("INDEX"):
            parser.expect_word("BY")
            key, _, _ = parser.datatype()
            decl.kind, decl.numeric_keys = "ASSOC", (key or "").split(" ")[0] in _INTEGER_KEYS
    elif parser.accept_word("VARRAY") or (parser.tok.is_word("VARYING")
                                          and parser.peek().is_word("ARRAY")):
        if tok.is_word("VARYING"):
            parser.advance()
            parser.advance()
        parser.expect_op("(")
        size = parser.tok
        if size.kind != NUMBER or not size.value.isdigit() or int(size.value) < 1:
            raise pls_error(size.line, size.col, "PLS-00325: non-integral numeric literal "
                            f"{size.shown()} is inappropriate in this context")
        parser.advance()
        parser.expect_op(")")
        parser.expect_word("OF")
        decl = TypeDecl(name.value, "VARRAY", name, _element(parser), int(size.value))
    elif tok.is_word("REF") and ref_cursor is not None:
        return ref_cursor(parser)
    elif tok.is_word("REF"):
        raise pls_error(tok.line, tok.col, "PLS-00999: implementation restriction (may be "
                        "temporary) a REF CURSOR type is not supported by the Sluice interpreter")
    else:
        raise unexpected(tok, ("array", "varray", "table", "object", "fixed", "varying",
                               "opaque", "record", "ref"))
    parser.expect_op(";", "index", "not")
    return decl


def _element(parser: Any) -> ElementRef:
    tok = parser.tok
    type_name, _, last = parser.datatype()
    rowtype = type_name is None and last.is_word("ROWTYPE")
    not_null = bool(parser.accept_word("NOT"))
    if not_null:
        parser.expect_word("NULL")
    return ElementRef(type_name, rowtype, not_null, tok)


def _fields(parser: Any) -> list[FieldDecl]:
    parser.expect_op("(")
    fields = []
    while True:
        name = parser.ident()
        element = _element(parser)
        default = parser.expr() if parser.accept_op(":=") or parser.accept_word("DEFAULT") \
            else None
        if element.not_null and default is None:
            raise pls_error(name.line, name.col, "PLS-00218: a variable declared NOT NULL "
                            "must have an initialization assignment")
        fields.append(FieldDecl(name.value, element, default, name))
        if not parser.accept_op(","):
            break
    parser.expect_op(")", ",", ":=", "default", "not")
    return fields


# ----------------------------------------------------------------- resolving
def resolve_type_decl(decl: TypeDecl, find: Callable[[str], TypeDecl | None],
                      expr: Callable[[Any], None]) -> None:
    """Link the elements naming a declared type (``find`` looks in the block's scopes) and
    resolve the fields' defaults.  A name that is no declared type stays a datatype."""
    refs = [decl.element] if decl.element is not None else [f.element for f in decl.fields]
    for ref in refs:
        if ref.type_name is not None:
            ref.local = find(ref.type_name)
    names = [f.name for f in decl.fields]
    for field in decl.fields:
        if names.count(field.name) > 1:
            raise semantic_error(field.tok.line, field.tok.col, "PLS-00410: duplicate fields "
                                 "in RECORD,TABLE or argument list are not permitted")
        if field.default is not None:
            expr(field.default)


def holds_records(decl: TypeDecl | None, by_name: bool = True) -> bool:
    """Is ``decl`` a collection whose elements are records (a row fills one)?  ``by_name``:
    ``%ROWTYPE`` ones too (a query's row names its columns; a RETURNING clause's does not)."""
    element = decl.element if decl is not None and decl.kind != "RECORD" else None
    return element is not None and ((element.rowtype and by_name) or (
        element.local is not None and element.local.kind == "RECORD"))


def takes_rows(decl: TypeDecl | None, bulk: bool) -> bool:
    """Does a variable of ``decl`` take a RETURNING clause's whole row (``bulk``: rows)?"""
    if bulk:
        return holds_records(decl, by_name=False)
    return decl is not None and decl.kind == "RECORD"


# ------------------------------------------------------------------- running
def runtime_type(decl: TypeDecl, lookup: Callable[[str], Any],
                 evaluate: Callable[[Any], Any]) -> CollectionType | RecordType:
    """The run-time type of ``decl``: ``lookup(name)`` gives the run-time type of a type it
    names, ``evaluate(expr)`` a field's default (when a record of the type is made)."""
    if decl.kind == "RECORD":
        return RecordType(decl.name, [
            (f.name, _element_type(f.element, lookup),
             (lambda e=f.default: evaluate(e)) if f.default is not None else None)
            for f in decl.fields])
    return CollectionType(decl.name, decl.kind, _element_type(decl.element, lookup),
                          decl.limit, decl.numeric_keys)


def _element_type(ref: ElementRef, lookup: Callable[[str], Any]) -> Any:
    if ref.local is not None:
        return lookup(ref.local.name)
    if ref.rowtype:
        return RowType()
    return ScalarType(ref.not_null)
