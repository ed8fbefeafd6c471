"""The DDL LCR's statement out of a client's multi-statement query string
(sluice.streams.capture.ddltext): PostgreSQL's lexical rules for where a statement ends,
and the fallback to the whole string whenever the statement cannot be told for sure."""

from __future__ import annotations

import pytest

from sluice.streams.capture.ddltext import split_statements, statement_text

SCRIPT = """CREATE TABLE a (id int, t text DEFAULT 'x;y'); -- a comment;
/* one; /* nested; */ */ CREATE UNIQUE INDEX ON a (id);
CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql
  BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END;
DO $body$ BEGIN EXECUTE 'CREATE TABLE x ()'; END $body$;
create table "B;c" (e text DEFAULT E'it\\'s;', "q""t;" int);
INSERT INTO a VALUES (1, $$;$$);
ALTER TABLE a ADD COLUMN b int"""


def test_split_respects_strings_identifiers_comments_and_bodies():
    assert split_statements(SCRIPT) == [
        "CREATE TABLE a (id int, t text DEFAULT 'x;y')",
        "-- a comment;\n/* one; /* nested; */ */ CREATE UNIQUE INDEX ON a (id)",
        "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql\n"
        "  BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END",
        "DO $body$ BEGIN EXECUTE 'CREATE TABLE x ()'; END $body$",
        "create table \"B;c\" (e text DEFAULT E'it\\'s;', \"q\"\"t;\" int)",
        "INSERT INTO a VALUES (1, $$;$$)",
        "ALTER TABLE a ADD COLUMN b int",
    ]


@pytest.mark.parametrize("tag, n, names, want", [
    ("CREATE TABLE", 1, ("a", None), "CREATE TABLE a (id int, t text DEFAULT 'x;y')"),
    ("CREATE INDEX", 1, ("a_id_idx", "a"), "CREATE UNIQUE INDEX ON a (id)"),   # its table named
    ("CREATE FUNCTION", 1, ("f", None), split_statements(SCRIPT)[2]),
    ("CREATE TABLE", 2, ("B;c", None), split_statements(SCRIPT)[4]),
    ("ALTER TABLE", 1, ("a", "a"), "ALTER TABLE a ADD COLUMN b int"),
])
def test_the_nth_statement_of_the_tag_that_names_the_object(tag, n, names, want):
    assert statement_text(SCRIPT, tag, n, names) == want


@pytest.mark.parametrize("tag, n, names", [
    ("CREATE TABLE", 1, ("x", None)),     # the DO block's table: its statement is not in the text
    ("CREATE TABLE", 3, ("y", None)),     # more events than statements of the tag
    ("CREATE TABLE", 2, ("a", None)),     # the count drifted: that statement names another table
    ("CREATE TABLE", None, ("a", None)),  # an older trigger's message (no count)
    ("DROP TABLE", 1, ("a", None)),
])
def test_anything_uncertain_keeps_the_whole_string(tag, n, names):
    assert statement_text(SCRIPT, tag, n, names) == SCRIPT


def test_a_single_statement_is_kept_as_it_is():
    one = "CREATE TABLE a (id int);  "
    assert statement_text(one, "CREATE TABLE", 1, ("a", None)) == one
    assert statement_text(None, "CREATE TABLE", 1, ("a", None)) is None
