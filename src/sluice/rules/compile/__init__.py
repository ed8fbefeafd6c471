"""Compilers: one rule tree, one compiler per target (DESIGN.md section 4).

* ``python.py`` -- rule -> nested Python closures (the reference semantics: SQL
  three-valued logic, Oracle's conversions and errors).
* ``typed/`` -- rule -> a small typed IR with Oracle's conversions made explicit, which
  the SQL and Spark targets only render (``lower``, ``ir``, the name resolvers).
* ``sql/`` -- rule -> a SQL boolean expression for SQLite or PostgreSQL (dequeue and
  subscriber conditions pushed into the store).
* ``spark/`` -- rule -> ``pyspark.sql.Column``, and rule set -> Spark query over LCR
  DataFrames (broadcast joins for simple rules, chunks for the rest).

A differential corpus (tests/rules/test_differential.py) holds the targets equal.
"""
