"""What the SQLite and PostgreSQL renderings share: SQL fragments with their parameters.

A rendered node is a :data:`Frag` -- SQL text and the values of its
placeholders, in order.  :func:`sql` fills a template with fragments, so a
fragment used twice (``CASE WHEN x ~ re THEN CAST(x AS numeric) END``) brings
its parameters twice and text and parameters never drift apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..typed import ir
from ..typed.ir import Node, Op

__all__ = ["Frag", "NOW", "SYSDATE", "sql", "join", "SqlRenderer"]

Frag = tuple[str, tuple]  # SQL text and the parameters of its placeholders, in order


class _Now:
    """A parameter whose value is the time of execution: SYSTIMESTAMP, or SYSDATE (a DATE:
    whole seconds, as the Python compiler's)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def at(self, now: datetime) -> datetime:
        return now.replace(microsecond=0) if self.name == "SYSDATE" else now


NOW, SYSDATE = _Now("SYSTIMESTAMP"), _Now("SYSDATE")


def sql(template: str, *frags: Frag) -> Frag:
    """Fill the ``{}`` holes of ``template`` with fragments, keeping parameter order."""
    pieces = template.split("{}")
    assert len(pieces) == len(frags) + 1, template
    text, params = [pieces[0]], []
    for frag, piece in zip(frags, pieces[1:]):
        text += [frag[0], piece]
        params += frag[1]
    return "".join(text), tuple(params)


def join(sep: str, frags: list[Frag]) -> Frag:
    return sql(sep.join(["{}"] * len(frags)), *frags)




class SqlRenderer(ir.Renderer):
    mark = "?"

    def r(self, node: Node) -> Frag:
        return self.render(node)

    def param(self, value: Any) -> Frag:
        return self.mark, (value,)

    def column(self, node: ir.Column) -> Frag:
        return ".".join('"' + part.replace('"', '""') + '"' for part in node.name.split(".")), ()

    def op_and(self, n: Op) -> Frag:
        return sql("({})", join(" AND ", [self.r(a) for a in n.args]))

    def op_or(self, n: Op) -> Frag:
        return sql("({})", join(" OR ", [self.r(a) for a in n.args]))

    def op_not(self, n: Op) -> Frag:
        return sql("(NOT {})", self.r(n.args[0]))

    def op_is_null(self, n: Op) -> Frag:
        return sql("({} IS NULL)", self.r(n.args[0]))

    def op_is_true(self, n: Op) -> Frag:
        return sql("({} IS TRUE)", self.r(n.args[0]))

    def op_cmp(self, n: Op) -> Frag:
        return sql("({} " + n.extra[0] + " {})", self.r(n.args[0]), self.r(n.args[1]))

    def op_case(self, n: Op) -> Frag:
        *whens, otherwise = n.args
        parts = [sql("WHEN {} THEN {}", self.r(whens[i]), self.r(whens[i + 1]))
                 for i in range(0, len(whens), 2)]
        return sql("CASE {} ELSE {} END", join(" ", parts), self.r(otherwise))

    def op_coalesce(self, n: Op) -> Frag:
        return sql("COALESCE({})", join(", ", [self.r(a) for a in n.args]))

    def op_concat(self, n: Op) -> Frag:
        return sql("({} || {})", self.r(n.args[0]), self.r(n.args[1]))

    def op_add(self, n: Op) -> Frag:
        return sql("({} + {})", self.r(n.args[0]), self.r(n.args[1]))

    def op_sub(self, n: Op) -> Frag:
        return sql("({} - {})", self.r(n.args[0]), self.r(n.args[1]))

    def op_mul(self, n: Op) -> Frag:
        return sql("({} * {})", self.r(n.args[0]), self.r(n.args[1]))

    def op_neg(self, n: Op) -> Frag:
        return sql("(- {})", self.r(n.args[0]))

    def op_now(self, n: Op) -> Frag:
        return self.param(SYSDATE if n.extra == ("SYSDATE",) else NOW)

    def args(self, n: Op) -> list[Frag]:
        return [self.r(a) for a in n.args]


