"""Oracle's number format models for ``TO_CHAR(number, 'fmt')``: the one writer of them.

The rules engine's TO_CHAR (:mod:`sluice.sqlfunctions`, and through it the rule compilers),
a user's SQL at a cursor on both stores (:mod:`sluice.store.oraclecalls`,
:mod:`sluice.store.sqlitefns`) and the PL/SQL interpreter's built-ins
(:mod:`sluice.plsql.builtins`) read and write a model here, so a rule condition, a query and
a block answer alike.  It sits in the base layer, below them all.

A model (``'99,999.99'``, ``'0000'``, ``'FM999.00'``, ``'S999'``, ``'999MI'``, ``'999PR'``,
``'$9,999.99'``) is read by :func:`number_model`: ``FM`` first (no padding: leading blanks
and the fraction's trailing zeros of ``9`` positions go), ``$`` (the dollar sign just before
the digits), ``S`` first or last (``+`` / ``-``), digits ``9`` (a digit, blank when a
leading zero) and ``0`` (a digit, leading zeros from it on), ``,`` / ``G`` (a group
separator, blank among leading blanks), ``.`` / ``D`` (the decimal point; NLS as
AMERICA: ``.`` and ``,``), ``MI`` / ``PR`` last (``-`` or a blank after; ``<…>`` or blanks
around).  Without S, MI or PR a leading position holds the sign (a blank for a positive
number), so ``TO_CHAR(12345.678, '99,999.99')`` is ``' 12,345.68'``.  The number is rounded
half away from zero to the model's decimals; one with more integer digits than the model
has is ``'#'`` times the model's length plus one.  A valid model with elements Sluice does not
write is SLU-00001: ``EEEE`` last (``'9.9EEEE'``), one ``L`` / ``C`` / ``U`` first, last or as the
decimal point, ``V`` (``'999V99'``, no decimal point), one ``B``, and the models that stand alone:
hexadecimal ``X`` after ``0`` or ``FM`` (``'0XXX'``), ``RN`` (FM allowed), ``TM`` / ``TM9`` / ``TME``.
Anything else is no model, ORA-01481 (``'xyz'``, ``'99X'``, ``'RN9'``), as Oracle's "Number Format
Models" reference restricts them.

``TO_NUMBER(text, fmt)`` reads text written so (:func:`read_number`): element by element, the
integer part right-aligned on the model's (fewer leading digits, and the group separators
among them, may be left out; a separator must stand where the model has one), no more
decimals than the model has, the sign where the model puts it (none: a leading ``-``), the
``$`` where the model has one; blanks around are ignored (``TO_CHAR``'s padding reads
back).  Anything else is ORA-01722 (invalid number), as Oracle's.  On PostgreSQL, whose own
``to_number`` reads a model loosely, :func:`pg_read_number` gives SQL reading a run-time value
(a column's) by the same rules: a regular expression of exactly the texts :func:`read_number`
reads.

SQLite's ``ORACLE_TO_CHAR(n, fmt)`` (:mod:`sluice.store.sqlitefns`) writes it with :func:`format_number`;
on PostgreSQL :func:`pg_to_char` gives the SQL of PostgreSQL's own ``to_char``, which reads
these models as Oracle does but for the overflow (``' ###'``) and ``$`` (kept where it
stands), both put right around it.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal
from functools import lru_cache
from typing import NamedTuple

from .errors import not_supported, ora

_NUMBER_TEXT = re.compile(r"(\$?)([0-9,]*)(?:\.([0-9]*))?")

__all__ = ["NumberModel", "format_number", "is_number_model", "number_model", "pg_read_number", "pg_to_char",
           "read_number"]

# the models that stand alone: hexadecimal (only 0 or FM before the Xs), Roman numerals, text minimum
_ALONE = re.compile(r"(?:FM)?(?:0*X+|RN)|TM[9E]?", re.I)
_BODY = re.compile(r"[09,]*(?:\.[09]*)?")
# a valid model's elements Sluice does not write, taken out before the rest is read: EEEE last, one
# currency symbol first, last or as the decimal point, V among the digits (no decimal point), one B
_UNWRITTEN = (re.compile(r"(.+)EEEE"), re.compile(r"[LCU](.*)|(.*?)[LCU]|([^.LCU]*)[LCU]([09]*)"),
              re.compile(r"([09,]+)V([09]+)"), re.compile(r"([^B]*)B([^B]*)"))


class NumberModel(NamedTuple):
    fm: bool
    dollar: bool
    sign: str           # '' (a leading sign position), 'S<' / 'S>' (S first / last), 'MI', 'PR'
    whole: str          # the integer part's 9, 0 and , (G read as ,)
    fraction: str | None     # the decimals' 9 and 0 (None: no decimal point)
    width: int          # the model's length (without FM) plus one: an overflow's '#'s


def is_number_model(fmt: str) -> bool:
    """Whether ``fmt`` is a number format model (it has a digit 9 or 0, a date's has none; or
    it is one that stands alone: hexadecimal ``X``, ``RN``, ``TM``)."""
    return "9" in fmt or "0" in fmt or _ALONE.fullmatch(fmt) is not None


@lru_cache(maxsize=256)
def number_model(fmt: str) -> NumberModel:
    """``fmt`` read (see the module): SLU-00001 for what Sluice does not write, ORA-01481 for
    what is no model."""
    text = fmt.upper()
    if _ALONE.fullmatch(text):
        raise _unwritten(fmt)
    fm = text.startswith("FM")
    if fm:
        text = text[2:]
    width = len(text) + 1
    sign = ""
    if text.startswith("S"):
        sign, text = "S<", text[1:]
    elif text.endswith("S"):
        sign, text = "S>", text[:-1]
    elif text.endswith("MI") or text.endswith("PR"):
        sign, text = text[-2:], text[:-2]
    dollar = text.count("$") == 1
    text = text.replace("$", "", 1).replace("G", ",").replace("D", ".")
    read = _written(text)
    if read is None:
        raise ora(1481)
    if read != text:
        raise _unwritten(fmt)
    whole, point, fraction = text.partition(".")
    return NumberModel(fm, dollar, sign, whole, fraction if point else None, width)


def _written(text: str) -> str | None:
    """``text`` (a model without FM, its sign and ``$``; G and D as ``,`` and ``.``) without the
    valid elements Sluice does not write (:data:`_UNWRITTEN`, each once), or None when what is
    left is no model."""
    for element in _UNWRITTEN:
        m = element.fullmatch(text)
        if m is not None:
            text = "".join(g for g in m.groups() if g)
    if not text or not _BODY.fullmatch(text) or text.startswith(","):
        return None
    return text


def _unwritten(fmt: str) -> Exception:
    return not_supported(f"the number format model {fmt!r} in TO_CHAR (Sluice writes 9 0 , . G D $ S MI PR FM)")


def format_number(value: Decimal | int | float, fmt: str) -> str:
    """Oracle's ``TO_CHAR(value, fmt)`` of a number (see the module)."""
    model = number_model(fmt)
    n = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(value, float) else value)
    if not n.is_finite():
        return "#" * model.width
    decimals = len(model.fraction or "")
    places = Context(prec=max(40, n.adjusted() + decimals + 2))
    q = n.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP, places)
    whole, _, fraction = format(abs(q), "f").partition(".")
    digits = model.whole.replace(",", "")
    zero_from = digits.find("0")
    if whole == "0" and zero_from < 0:
        # TO_CHAR(.5, '9.9') is ' .5', but a zero is written where no decimal would be: '9' or '9.'
        whole = "" if model.fraction or not digits else "0"
    if len(whole) > len(digits):
        return "#" * model.width
    whole = whole.zfill(len(digits) - zero_from if zero_from >= 0 else 0)
    out, pending = [], list(whole)
    for ch in reversed(model.whole):
        if ch == ",":
            out.append("," if pending else " ")
        else:
            out.append(pending.pop() if pending else " ")
    body = "".join(reversed(out)).lstrip(" ")
    if model.fraction is not None:
        if model.fm:        # FM drops the fraction's trailing zeros at its 9 positions
            keep = len(fraction)
            while keep and model.fraction[keep - 1] == "9" and fraction[keep - 1] == "0":
                keep -= 1
            fraction = fraction[:keep]
        body += "." + fraction
    if model.dollar:
        body = "$" + body
    negative = q < 0
    if model.sign == "S<":
        body = ("-" if negative else "+") + body
    elif model.sign == "S>":
        body += "-" if negative else "+"
    elif model.sign == "MI":
        body += "-" if negative else ("" if model.fm else " ")
    elif model.sign == "PR":
        body = f"<{body}>" if negative else body if model.fm else f" {body} "
    elif negative:
        body = "-" + body
    if model.fm:
        return body
    size = model.width - {"": 0, "MI": 2}.get(model.sign, 1)     # (the sign's place in the model's length)
    return body.rjust(size)


def pg_to_char(fmt: str) -> tuple[str, str, str]:
    """PostgreSQL's SQL for ``TO_CHAR(x, fmt)`` of a number: (text before ``x``, text after it,
    the overflow's text) — ``to_char(CAST(x AS NUMERIC), model)`` with G and D as ``,`` and
    ``.`` (PostgreSQL's are the server locale's), the ``$`` taken out and put back before the
    digits, and a decimal point with no digit after it (``'999.'``, which PostgreSQL drops, and
    with MI / PR / S after it garbles) taken out and put back after the last digit."""
    model = number_model(fmt)
    sent = fmt.upper().replace("G", ",").replace("D", ".")
    if model.dollar:
        sent = sent.replace("$", "", 1)
    if model.fraction == "":
        sent = sent.replace(".", "", 1)
    call = ("to_char(CAST((", f") AS NUMERIC), '{sent}')")
    if model.dollar:
        call = ("regexp_replace(" + call[0], call[1] + r", '^(\s*)([-+<]?)', '\1\2$')")
    if model.fraction == "":
        call = ("regexp_replace(" + call[0], call[1] + r", '([0-9])([^0-9]*)$', '\1.\2')")
    return call[0], call[1], "#" * model.width


def read_number(text: str, fmt: str) -> Decimal:
    """Oracle's ``TO_NUMBER(text, fmt)`` (see the module): ORA-01722 for text the model does
    not read, SLU-00001 / ORA-01481 for a model as :func:`number_model`."""
    model = number_model(fmt)
    body, negative = text.strip(), False
    if model.sign == "S<" or model.sign == "S>":
        sign = body[:1] if model.sign == "S<" else body[-1:]
        if sign not in ("+", "-"):
            raise ora(1722, repr(text))
        body, negative = (body[1:] if model.sign == "S<" else body[:-1]), sign == "-"
    elif model.sign == "MI" and body.endswith("-"):
        body, negative = body[:-1], True
    elif model.sign == "PR" and body.startswith("<") and body.endswith(">"):
        body, negative = body[1:-1], True
    elif not model.sign and body.startswith("-"):
        body, negative = body[1:], True
    m = _NUMBER_TEXT.fullmatch(body)
    if not m or bool(m.group(1)) != model.dollar or not (m.group(2) or m.group(3)):
        raise ora(1722, repr(text))
    whole, fraction = m.group(2), m.group(3)
    if fraction is not None and (model.fraction is None or len(fraction) > len(model.fraction)):
        raise ora(1722, repr(text))
    if len(whole) > len(model.whole) or not _aligned(whole, model.whole):
        raise ora(1722, repr(text))
    n = Decimal((whole.replace(",", "") or "0") + "." + (fraction or "0"))
    return -n if negative else n


def pg_read_number(fmt: str) -> tuple[str, str]:
    """PostgreSQL's SQL for ``TO_NUMBER(x, fmt)`` of a run-time ``x``: (text before ``x``, text
    after it).  ``x`` is read once (a subquery over VALUES); text matching :func:`number_pattern`
    is its digits and point cast to NUMERIC, negative by its ``-`` or ``<``; other text is cast
    as ``'ORA-01722: invalid number'``, which PostgreSQL refuses (ORA-01722).  No ``||``: the
    statement's concatenations are rewritten after (:mod:`sluice.store.oraclestrings`)."""
    pattern = number_pattern(fmt)
    return ("(SELECT CASE WHEN sluice_t ~ '[-<]' THEN -1 ELSE 1 END * CAST(CASE WHEN sluice_t IS NULL THEN NULL "
            "WHEN sluice_t ~ '" + pattern + "' THEN regexp_replace(sluice_t, '[^0-9.]', '', 'g') "
            "ELSE 'ORA-01722: invalid number' END AS NUMERIC) FROM (VALUES (NULLIF(CAST(",
            " AS TEXT), ''))) AS sluice_values(sluice_t))")


@lru_cache(maxsize=64)
def number_pattern(fmt: str) -> str:
    """A regular expression (POSIX ERE, as PostgreSQL's ``~`` reads it; Python's ``re`` reads it
    alike) matching exactly the texts :func:`read_number` reads by ``fmt``."""
    model = number_model(fmt)
    tails = [model.whole[len(model.whole) - k:] for k in range(len(model.whole), 0, -1)]
    whole = "|".join("".join("," if c == "," else "[0-9]" for c in tail)
                     for tail in tails if not tail.startswith(","))
    bodies = []
    if whole:
        bodies.append(f"(?:{whole})" + ("" if model.fraction is None else f"(?:\\.[0-9]{{0,{len(model.fraction)}}})?"))
    if model.fraction:
        bodies.append(f"\\.[0-9]{{1,{len(model.fraction)}}}")
    body = ("\\$" if model.dollar else "") + "(?:" + ("|".join(bodies) or "(?!)") + ")"
    signed = {"": f"-?{body}", "S<": f"[-+]{body}", "S>": f"{body}[-+]", "MI": f"{body}-?",
              "PR": f"<{body}>|{body}"}[model.sign]
    return f"^\\s*(?:{signed})\\s*$"


def _aligned(whole: str, template: str) -> bool:
    """Whether the integer text ``whole`` (digits and commas) stands right-aligned on the
    model's ``template`` (9, 0 and ,): a digit on a digit, a comma on a comma."""
    tail = template[len(template) - len(whole):]
    return all((w == ",") == (t == ",") for w, t in zip(whole, tail)) and not whole.startswith(",")
