"""The rule condition language: text -> tree, and the static checks on it.

``lexer`` (tokens with Oracle's line/column positions) -> ``parser`` (recursive descent,
Oracle SQL precedence) -> ``ast`` (the one tree every compiler reads); ``typecheck``
refuses, before anything is stored, a condition its evaluation context can never run.
The SQL built-in functions and implicit conversions the language calls live one layer
down, in :mod:`sluice.sqlfunctions`, because the SQLite store runs them too.
"""
