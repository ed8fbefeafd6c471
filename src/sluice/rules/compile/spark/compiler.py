"""Compile a rule condition to a ``pyspark.sql.Column`` (PySpark 4, ANSI mode).

::

    from sluice.rules.compile.spark.compiler import compile_spark, fired_rules
    from sluice.rules.compile.typed.lcrschema import LcrResolver

    rules = {name: compile_spark(text, LcrResolver()) for name, text in rule_texts.items()}
    lcrs.withColumn("fired", fired_rules(rules))     # array of the names whose rule is TRUE

The Column computes what the Python compiler computes (TRUE / FALSE / NULL)
and is NULL where Python raises an evaluation error
(:mod:`sluice.rules.compile.typed.lower`).  Nothing in it can fail a job under ANSI
mode: conversions are ``try_cast`` behind a regex check, arithmetic is ``try_add`` & co,
map reads are ``try_element_at``.

Datatypes: NUMBER is any Spark numeric type (text converts to
``decimal(38,10)``; division is done in double precision, where Python keeps
38 digits), CHAR is ``string`` (binary order, as Python), DATE is
``timestamp_ntz`` (``timestamp`` and ``date`` columns work too), RAW is
``binary``.  Not compilable here: member calls outside :class:`LcrResolver`,
TO_DATE of a column, CHAR-to-DATE comparisons, number format models, ROUND /
TRUNC with a run-time number of places, INSTR with a start before 1 or an
occurrence, LIKE with a run-time ESCAPE character, number constants no Spark
decimal holds (``1e100``) or with more than 10 decimals.

Known differences that remain: text converted to a number keeps 10 decimals
and 28 integer digits (``decimal(38,10)``; more is NULL), so does a number
converted to text; ``try_add`` & co give NULL on overflow where Python's
numbers are unbounded; INITCAP treats letters and digits as ``\\p{L}\\p{N}``
(Python: ``str.isalnum``); beside a ``decimal(38,0)`` column (the LCR SCNs)
Spark rounds a fraction to an integer (``get_scn() < 1000.4`` is FALSE for 1000,
``NVL(get_scn(), 2.5)`` is 3).

Compile many rules with :func:`compile_spark_rules` (one renderer, shared
sub-expressions: a Column costs a JVM call per node) and evaluate them with
:func:`fired_rules` / :func:`rule_outcomes`.
"""

from __future__ import annotations

from decimal import Decimal
from functools import reduce
from typing import Any, Mapping, Sequence, TypeVar

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ....sqlfunctions import VARCHAR2_MAX
from ...lang.ast import Expr
from ...lang.parser import parse_condition
from ..typed import ir
from ..typed.dates import NUMERIC, casing, elements
from ..typed.ir import Const, Node, NotCompilable, Op
from ..typed.lower import TargetResolver, lower_condition

__all__ = ["compile_spark", "compile_spark_rules", "rule_outcomes", "fired_rules", "SparkRenderer",
           "NUMBER_TYPE"]

K = TypeVar("K")

NUMBER_TYPE = T.DecimalType(38, 10)  # what text becomes when it meets a number
_TYPES = {"NUMBER": NUMBER_TYPE, "CHAR": T.StringType(), "DATE": T.TimestampNTZType(),
          "RAW": T.BinaryType(), "BOOL": T.BooleanType(), "NULL": T.StringType(),
          "MAP": T.MapType(T.StringType(), T.StringType())}
# Java regexes: \x0B where Python's \s has \v, and \A \z because rlike searches
_NUMBER_RE = r"\A[ \t\n\r\f\x0B]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,4})?[ \t\n\r\f\x0B]*\z"
_HEX_RE = r"\A[0-9A-Fa-f]*\z"
_INT = 2147483647


def compile_spark(condition: str | Expr, resolver: TargetResolver,
                  renderer: SparkRenderer | None = None) -> Column:
    """A boolean Column for ``condition``.

    :raises DatabaseError: the Python compiler's compile-time errors (ORA-00904 ...).
    :raises NotCompilable: the condition needs the Python compiler.
    """
    tree = parse_condition(condition) if isinstance(condition, str) else condition
    return (renderer or SparkRenderer()).render(lower_condition(tree, resolver))


def compile_spark_rules(rules: Mapping[K, str | Expr], resolver: TargetResolver
                        ) -> tuple[dict[K, Column], dict[K, str]]:
    """Compile a rule set: (Columns of the compilable rules, reasons for the others).

    Building a Column costs a call into the JVM per node; the rules share one
    renderer, so a sub-expression common to many rules (the LCR accessors, the
    ``lcr_kind`` guards) is built once.  Rules refused here run in Python.
    """
    renderer = SparkRenderer()
    compiled: dict[K, Column] = {}
    refused: dict[K, str] = {}
    for key, condition in rules.items():
        try:
            compiled[key] = compile_spark(condition, resolver, renderer)
        except NotCompilable as e:
            refused[key] = e.reason
    return compiled, refused


def rule_outcomes(conditions: Sequence[Column], chunk_size: int = 50) -> Column:
    """``array<boolean>``: every condition's TRUE / FALSE / NULL, in order.

    Java caps a method at 64 KB: one CASE over a few hundred rules generates a
    method that does not compile (the job fails when
    ``spark.sql.codegen.fallback`` is off, and crawls when it is on).  Here
    each rule is an array element of its own, in arrays of ``chunk_size``
    concatenated: Spark generates each element's code separately and splits
    it into methods (or, past ``spark.sql.codegen.hugeMethodLimit``, runs the
    stage without whole-stage codegen), so any number of rules evaluates.
    """
    chunks = [F.array(*conditions[i:i + chunk_size]) for i in range(0, len(conditions), chunk_size)]
    if not chunks:
        return F.array().cast("array<boolean>")
    return chunks[0] if len(chunks) == 1 else F.concat(*chunks)


def fired_rules(rules: Mapping[Any, Column], chunk_size: int = 50) -> Column:
    """``array<id>``: the ids (keys of ``rules``) whose condition is TRUE, in order."""
    items = list(rules.items())
    chunks = [F.array_compact(F.array(*[F.when(c, F.lit(k)) for k, c in items[i:i + chunk_size]]))
              for i in range(0, len(items), chunk_size)]
    if not chunks:
        return F.array()
    return chunks[0] if len(chunks) == 1 else F.concat(*chunks)


def _spark_like(pattern: str, escape: str | None) -> str:
    """An Oracle LIKE pattern (validated) re-escaped for Spark, whose escape is always '\\'."""
    out, chars = [], iter(pattern)
    for ch in chars:
        if ch == escape:
            ch = next(chars)
            out.append("\\" + ch if ch in "%_\\" else ch)
        elif ch == "\\":
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


def _int64(v: object) -> bool:
    """A constant Spark takes as a bigint literal (anything else becomes a decimal)."""
    return isinstance(v, int) and -(2**63) <= v < 2**63


def _precision(d: Decimal) -> int:
    """The precision of the Spark decimal a literal becomes: 1E+100 needs 101 digits, 1E-50 50."""
    digits, exponent = len(d.as_tuple().digits), d.as_tuple().exponent
    if not isinstance(exponent, int):  # NaN / Infinity: no decimal at all
        return 39
    return digits + exponent if exponent >= 0 else max(digits, -exponent)


def _java_char(ch: str) -> str:
    return ch if ch.isalnum() else "\\" + ch


class SparkRenderer(ir.Renderer):
    target = "Spark"

    def __init__(self) -> None:
        self._built: dict[Node, Column] = {}  # equal IR -> the one Column already built

    def render(self, node: Node) -> Column:
        try:
            return self._built[node]
        except KeyError:
            column = self._built[node] = super().render(node)
            return column
        except TypeError:  # a Native node holding an unhashable handle
            return super().render(node)

    def r(self, node: Node) -> Column:
        return self.render(node)

    def args(self, n: Op) -> list[Column]:
        return [self.r(a) for a in n.args]

    def const(self, node: Const) -> Column:
        v = node.value
        if v is None:
            return F.lit(None).cast(_TYPES.get(node.kind, T.StringType()))
        if node.kind == "NUMBER":
            if isinstance(v, int) and not _int64(v):
                v = Decimal(v)
            if isinstance(v, Decimal) and _precision(v) > 38:
                # no Spark decimal holds it: the job would fail (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)
                raise NotCompilable("a number of more than 38 digits")
            if isinstance(v, Decimal) and v.is_finite() and v.normalize().as_tuple().exponent < -10:
                # beside a decimal(38,10) value (a number read from text) Spark keeps ten decimals
                # and rounds the constant: AccessNumber() = 2.00000000001 was TRUE for 2
                raise NotCompilable("a number with more than 10 decimals")
            return F.lit(v)
        if node.kind == "DATE":
            return F.lit(v.isoformat(sep=" ")).cast(T.TimestampNTZType())
        if node.kind == "RAW":
            return F.lit(bytearray(v))
        return F.lit(v)

    def column(self, node: ir.Column) -> Column:
        return F.col(node.name)

    # --- logic -------------------------------------------------------------------------

    def op_and(self, n: Op) -> Column:
        return reduce(lambda a, b: a & b, self.args(n))

    def op_or(self, n: Op) -> Column:
        return reduce(lambda a, b: a | b, self.args(n))

    def op_not(self, n: Op) -> Column:
        return ~self.r(n.args[0])

    def op_is_null(self, n: Op) -> Column:
        return self.r(n.args[0]).isNull()

    def op_is_true(self, n: Op) -> Column:
        return F.coalesce(self.r(n.args[0]), F.lit(False))

    def op_cmp(self, n: Op) -> Column:
        a, b = self.args(n)
        result = {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[n.extra[0]]
        if n.extra[0] not in ("=", "<>"):
            # Spark 4 folds NULL-bigint >= 12345678901234567890BD (a decimal constant past the
            # column's integral type) to FALSE, not NULL: keep the NULL by hand
            for x, other in ((n.args[0], b), (n.args[1], a)):
                if isinstance(x, Const) and x.kind == "NUMBER" and not _int64(x.value):
                    return F.when(other.isNotNull(), result)
        return result

    def op_case(self, n: Op) -> Column:
        *whens, otherwise = n.args
        out = F.when(self.r(whens[0]), self.r(whens[1]))
        for i in range(2, len(whens), 2):
            out = out.when(self.r(whens[i]), self.r(whens[i + 1]))
        return out.otherwise(self.r(otherwise))

    def op_coalesce(self, n: Op) -> Column:
        return F.coalesce(*self.args(n))

    def op_nullif_empty(self, n: Op) -> Column:
        x = self.r(n.args[0])
        empty = F.lit("") if n.kind == "CHAR" else F.lit(bytearray())
        return F.nullif(x, empty)

    # --- LIKE ------------------------------------------------------------------------

    def op_like(self, n: Op) -> Column:
        return self.r(n.args[0]).like(_spark_like(*n.extra))

    def op_like_dyn(self, n: Op) -> Column:
        value, pattern = self.args(n)[:2]
        if len(n.args) == 2:  # no ESCAPE: a backslash is an ordinary character
            return F.like(value, F.regexp_replace(pattern, F.lit(r"\\"), F.lit(r"\\\\")))
        escape = n.args[2]
        if not isinstance(escape, Const):
            raise NotCompilable("LIKE with a run-time ESCAPE character")
        # Spark raises on a pattern Oracle refuses: hand it NULL instead
        safe = F.when(~self.op_like_bad(n, n.args[1:]), pattern)
        return F.like(value, safe, F.lit(escape.value))

    def op_like_bad(self, n: Op, args: tuple[Node, ...] | None = None) -> Column:
        pattern, escape = args or n.args
        if not isinstance(escape, Const):
            raise NotCompilable("LIKE with a run-time ESCAPE character")
        e = _java_char(escape.value)
        return ~self.r(pattern).rlike(rf"\A([^{e}]|{e}[%_{e}])*\z")

    # --- conversions ---------------------------------------------------------------

    def op_num_of_char(self, n: Op) -> Column:
        x = self.r(n.args[0])
        return F.when(x.rlike(_NUMBER_RE), x.try_cast(NUMBER_TYPE))

    def op_num_bad(self, n: Op) -> Column:
        return ~self.r(n.args[0]).rlike(_NUMBER_RE)

    def op_char_of_num(self, n: Op) -> Column:
        text = self.r(n.args[0]).try_cast(NUMBER_TYPE).cast("string")  # never an exponent
        text = F.regexp_replace(text, F.lit(r"\.?0+\z"), F.lit(""))  # scale 10 always has a '.'
        return F.regexp_replace(text, F.lit(r"\A(-?)0\."), F.lit("$1."))

    def op_char_of_date(self, n: Op) -> Column:
        return self._date_text(self.r(n.args[0]), "DD-MON-RR")

    def op_char_of_raw(self, n: Op) -> Column:
        return F.hex(self.r(n.args[0]))

    def op_raw_of_char(self, n: Op) -> Column:
        x = self.r(n.args[0])
        return F.when(x.rlike(_HEX_RE), F.unhex(x))

    def op_date_of_iso(self, n: Op) -> Column:
        return self.r(n.args[0]).try_cast(T.TimestampNTZType())

    def op_raw_bad(self, n: Op) -> Column:
        return ~self.r(n.args[0]).rlike(_HEX_RE)

    # --- arithmetic --------------------------------------------------------------------

    def op_add(self, n: Op) -> Column:
        return F.try_add(*self.args(n))

    def op_sub(self, n: Op) -> Column:
        return F.try_subtract(*self.args(n))

    def op_mul(self, n: Op) -> Column:
        return F.try_multiply(*self.args(n))

    def op_div(self, n: Op) -> Column:
        a, b = self.args(n)
        return F.try_divide(a.cast("double"), b.cast("double"))

    def op_neg(self, n: Op) -> Column:
        return F.try_subtract(F.lit(0), self.r(n.args[0]))

    def op_concat(self, n: Op) -> Column:
        return F.concat(*self.args(n))

    def op_now(self, n: Op) -> Column:
        now = F.localtimestamp()
        if n.extra == ("SYSDATE",):  # a DATE: whole seconds (date_trunc would go through the time zone)
            return F.to_timestamp_ntz(F.date_format(now, "yyyy-MM-dd HH:mm:ss"))
        return now

    def op_date_add(self, n: Op) -> Column:
        d, days = self.args(n)
        seconds = (days.cast("double") * F.lit(86400.0)).try_cast(T.DecimalType(18, 6))
        return d.cast(T.TimestampNTZType()) + F.make_dt_interval(F.lit(0), F.lit(0), F.lit(0), seconds)

    def op_date_diff(self, n: Op) -> Column:
        a, b = (x.cast(T.TimestampNTZType()) for x in self.args(n))
        micros = F.timestamp_diff("MICROSECOND", b, a).cast(T.DecimalType(20, 0))
        return F.try_divide(micros, F.lit(Decimal(86400000000)))

    # --- LCR / JSON access -------------------------------------------------------------

    def op_map_get(self, n: Op) -> Column:
        return F.try_element_at(self.r(n.args[0]), F.lit(n.extra[0]))

    def op_map_has(self, n: Op) -> Column:
        return F.coalesce(F.map_contains_key(self.r(n.args[0]), F.lit(n.extra[0])), F.lit(False))

    def op_json_get(self, n: Op) -> Column:
        path = "$" + "".join(f"['{k}']" for k in n.extra[0])
        return F.get_json_object(self.r(n.args[0]), path)

    # --- Oracle built-ins ------------------------------------------------------------

    def _int(self, x: Column) -> Column:
        clamped = F.least(F.greatest(x.try_cast("double"), F.lit(-float(_INT))), F.lit(float(_INT)))
        return clamped.cast("int")  # a double in int range casts by truncation, as Oracle

    def fn_UPPER(self, n: Op) -> Column:
        return F.upper(self.r(n.args[0]))

    def fn_LOWER(self, n: Op) -> Column:
        return F.lower(self.r(n.args[0]))

    def fn_INITCAP(self, n: Op) -> Column:
        # Spark's initcap splits words at blanks only; Oracle at every non-alphanumeric
        s = self.r(n.args[0])
        chars = F.transform(F.sequence(F.lit(1), F.length(s)), lambda i: F.when(
            (i == 1) | ~F.substring(s, i - 1, F.lit(1)).rlike(r"[\p{L}\p{N}]"),
            F.upper(F.substring(s, i, F.lit(1)))).otherwise(F.lower(F.substring(s, i, F.lit(1)))))
        return F.array_join(chars, "")

    def fn_LENGTH(self, n: Op) -> Column:
        return F.length(self.r(n.args[0]))

    def fn_TRIM(self, n: Op) -> Column:
        return F.btrim(self.r(n.args[0]), F.lit(" "))

    def fn_LTRIM(self, n: Op) -> Column:
        return F.ltrim(*self.args(n))

    def fn_RTRIM(self, n: Op) -> Column:
        return F.rtrim(*self.args(n))

    def fn_REPLACE(self, n: Op) -> Column:
        return F.replace(*self.args(n))

    def fn_SUBSTR(self, n: Op) -> Column:
        s, pos = self.r(n.args[0]), self._int(self.r(n.args[1]))
        length = F.length(s)
        start = F.when(pos > 0, pos - 1).when(pos < 0, length + pos).otherwise(F.lit(0))
        out_of_range = pos.isNull() | (start < 0) | (start >= length)  # strict in pos
        if len(n.args) == 2:
            return F.when(~out_of_range, F.substring(s, start + 1, length))
        count = self._int(self.r(n.args[2]))
        return F.when(~out_of_range & (count >= 1), F.substring(s, start + 1, count))

    def fn_INSTR(self, n: Op) -> Column:
        s, sub, *rest = n.args
        start = rest[0].value if rest and isinstance(rest[0], Const) else None
        once = len(rest) < 2 or (isinstance(rest[1], Const) and int(rest[1].value) == 1)
        if rest and (start is None or start < 1) or not once:
            raise NotCompilable("INSTR with a start before 1 or an occurrence other than 1")
        start = min(int(start or 1), _INT)  # past any text: 0, as from 2147483647 (locate takes an int)
        return F.call_function("locate", self.r(sub), self.r(s), F.lit(start))

    # LPAD / RPAD results are cut at VARCHAR2_MAX, padding only as far as the cut (sqlfunctions._pad):
    # lpad(s, 2147483647) would fail the job

    def fn_LPAD(self, n: Op) -> Column:
        s, length, fill = self.args(n)
        padded = F.lpad(s, F.least(self._int(length), F.length(s) + F.lit(VARCHAR2_MAX)), fill)
        return F.substring(padded, 1, VARCHAR2_MAX)

    def fn_RPAD(self, n: Op) -> Column:
        s, length, fill = self.args(n)
        return F.rpad(s, F.least(self._int(length), F.lit(VARCHAR2_MAX)), fill)

    def fn_ABS(self, n: Op) -> Column:
        return F.abs(self.r(n.args[0]))

    def _whole(self, fn: Any, x: Column) -> Column:
        """F.floor / F.ceil that cannot fail the job: Spark's floor of a double is a bigint, an
        ARITHMETIC_OVERFLOW past 9.2E18 under ANSI.  A double that large is whole already and goes
        through decimal(38,10) instead (NULL past 1E28, as text converted to a number)."""
        small = (x < F.lit(float(2**62))) & (x > F.lit(-float(2**62)))
        return F.when(small, fn(x)).otherwise(fn(x.try_cast(NUMBER_TYPE)))

    def fn_FLOOR(self, n: Op) -> Column:
        return self._whole(F.floor, self.r(n.args[0]))

    def fn_CEIL(self, n: Op) -> Column:
        return self._whole(F.ceil, self.r(n.args[0]))

    def fn_SIGN(self, n: Op) -> Column:
        return F.signum(self.r(n.args[0]))

    def fn_MOD(self, n: Op) -> Column:
        m, d = self.args(n)
        return F.when(d == 0, m).otherwise(F.try_mod(m, d))

    def _places(self, n: Op, name: str) -> int:
        places = n.args[1]
        if not isinstance(places, Const):
            raise NotCompilable(f"{name} with a run-time number of places")
        if not -38 <= places.value <= 38:  # 10 ** places is no Spark decimal (the job fails)
            raise NotCompilable(f"{name} to {places.value} places")
        return int(places.value)

    def fn_ROUND(self, n: Op) -> Column:
        return F.round(self.r(n.args[0]), self._places(n, "ROUND"))

    def fn_TRUNC(self, n: Op) -> Column:
        x = self.r(n.args[0])
        if n.kind == "DATE":
            return x.cast("date").cast(T.TimestampNTZType())
        scale = F.lit(Decimal(10) ** self._places(n, "TRUNC"))
        down, up = self._whole(F.floor, x * scale), self._whole(F.ceil, x * scale)
        return F.when(x >= 0, down / scale).otherwise(up / scale)

    # Oracle's GREATEST(x) of one argument is x; Spark's wants two or more
    def fn_GREATEST(self, n: Op) -> Column:
        args = self.args(n)
        return F.greatest(*args) if len(args) > 1 else args[0]

    def fn_LEAST(self, n: Op) -> Column:
        args = self.args(n)
        return F.least(*args) if len(args) > 1 else args[0]

    def fn_TO_CHAR(self, n: Op) -> Column:
        value, fmt = n.args
        if value.kind != "DATE" or not isinstance(fmt, Const):
            raise NotCompilable("TO_CHAR with a number format model")
        return self._date_text(self.r(value), fmt.value)

    def _date_text(self, d: Column, fmt: str) -> Column:
        """TO_CHAR(d, fmt) built element by element (sqlfunctions._format_date)."""
        pieces = []
        for e in elements(fmt):
            if not e.key:
                pieces.append(F.lit(e.text))
            elif e.key.startswith("FF"):
                pieces.append(F.date_format(d, "SSSSSS").substr(1, min(int(e.key[2:] or 6), 6)))
            elif e.key in NUMERIC:
                pieces.append(self._date_number(d, e.key, e.fm))
            else:
                pieces.append(self._date_name(d, e.key, casing(e.text), e.fm))
        return F.concat(*pieces) if pieces else F.lit(None).cast("string")

    def _date_number(self, d: Column, key: str, fm: bool) -> Column:
        java = {"YYYY": "yyyy", "RRRR": "yyyy", "YY": "yy", "RR": "yy", "MM": "MM", "DD": "dd",
                "DDD": "DDD", "HH24": "HH", "HH": "hh", "HH12": "hh", "MI": "mm", "SS": "ss"}
        if key == "D":
            text = F.dayofweek(d).cast("string")  # Sunday is 1, as in Oracle's default
        elif key == "Q":
            text = F.quarter(d).cast("string")
        else:
            text = F.date_format(d, java[key])
        if fm:  # FM drops leading zeros ("0" stays)
            text = F.regexp_replace(text, F.lit(r"\A0+(?=.)"), F.lit(""))
        return text

    def _date_name(self, d: Column, key: str, style: str, fm: bool) -> Column:
        java = {"MONTH": "MMMM", "MON": "MMM", "DAY": "EEEE", "DY": "EEE", "AM": "a", "PM": "a"}
        text = F.date_format(d, java[key])
        if key in ("MONTH", "DAY") and not fm:
            text = F.rpad(text, 9, " ")  # Oracle pads names to the longest one
        if style == "upper":
            return F.upper(text)
        return F.lower(text) if style == "lower" else F.initcap(F.lower(text))
