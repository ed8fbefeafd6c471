r"""A target-neutral corpus for the rule condition language.

Each case is ``(condition, expected)`` or ``(condition, expected, context)``:
``expected`` is True, False, None (UNKNOWN) or an int, the ORA code the
evaluation must raise.  ``context`` entries are merged over ``CONTEXT``.
Identifiers and ``:binds`` are looked up in the context ignoring case.

Every compiler (Python closures, SQL dialects, Spark Columns) is meant to run
this same list, so the expected values are Oracle's, NULLs included.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from types import SimpleNamespace

CONTEXT = {
    "n1": 1, "n2": 2, "n10": 10, "neg": -3, "zero": 0,
    "dec": Decimal("2.50"), "flt": 2.5,
    "s": "abc", "up": "ABC", "empty": "", "nul": None,
    "num_s": "10", "bad_s": "x1", "sp": " 42 ",
    "name": "O'Brien", "pct": "100%", "under": "a_b", "bslash": "a\\b",
    "d1": datetime(2024, 1, 15, 10, 30), "d2": date(2024, 1, 16),
    "raw": b"\x02",
    "msg": {"region": "EUROPE", "priority": 1},
    "obj": SimpleNamespace(price=Decimal("9.99"), name="widget", qty=None),
    "nul_n": None, "nul_d": None, "nul_r": None, "pat": "a%", "pat_bad": "a\\",
}

# The datatype of context values that are None everywhere (typed targets need one).
NULL_KINDS = {"nul": "CHAR", "nul_n": "NUMBER", "nul_d": "DATE", "nul_r": "RAW", "obj.qty": "NUMBER"}

T, F, N = True, False, None

NULL_LOGIC = [
    ("n1 = 1", T), ("n1 = 2", F), ("nul = 1", N), ("nul = nul", N),
    ("nul IS NULL", T), ("nul IS NOT NULL", F), ("n1 IS NULL", F), ("n1 IS NOT NULL", T),
    ("NOT (nul = 1)", N), ("n1 = 1 AND nul = 1", N), ("n1 = 2 AND nul = 1", F),
    ("nul = 1 AND n1 = 2", F), ("n1 = 1 OR nul = 1", T), ("nul = 1 OR n1 = 1", T),
    ("n1 = 2 OR nul = 1", N), ("NOT (n1 = 2 OR nul = 1)", N), ("NOT n1 = 2", T),
    ("NOT NOT n1 = 1", T), ("nul = 1 OR nul = 2", N), ("n1 <> nul", N),
    ("NULL IS NULL", T), ("NULL = NULL", N), ("n1 = 1 AND n2 = 2 AND n10 = 10", T),
    ("n1 = 1 AND (n2 = 3 OR nul IS NULL)", T), ("n1 = 1 OR n2 = 2 AND n10 = 0", T),
    ("(n1 = 1 OR n2 = 2) AND n10 = 0", F), ("NOT n1 = 1 AND n2 = 2", F),
    # undefined variables read as NULL (seed 000, "Undefined Variables")
    (":m IS NULL", T), (":m = 5", N), (":m <> 5", N), ("NOT :m = 5", N),
    ("n1 = 1 AND :m IS NULL", T), ("n1 = 1 AND :m = 5", N),
]

EMPTY_IS_NULL = [
    ("empty IS NULL", T), ("'' IS NULL", T), ("empty = ''", N), ("'' = ''", N),
    ("empty || 'a' = 'a'", T), ("nul || 'a' = 'a'", T), ("'a' || '' = 'a'", T),
    ("empty || nul IS NULL", T), ("LENGTH(empty) IS NULL", T), ("NVL(empty, 'x') = 'x'", T),
    ("UPPER(empty) IS NULL", T), ("SUBSTR(s, 5) IS NULL", T), ("REPLACE('aa', 'a') IS NULL", T),
    ("TRIM('   ') IS NULL", T), ("empty IN ('', 'a')", N), ("empty LIKE '%'", N),
    (":e IS NULL", T, {"e": ""}), ("s <> ''", N),
]

LIKE = [
    ("s LIKE 'a%'", T), ("s LIKE 'A%'", F), ("s LIKE '_b_'", T), ("s LIKE '__'", F),
    ("s LIKE '%'", T), ("s LIKE 'abc'", T), ("s LIKE 'ab'", F), ("s NOT LIKE 'x%'", T),
    ("s NOT LIKE 'a%'", F), (r"pct LIKE '100\%' ESCAPE '\'", T),
    (r"'100x' LIKE '100\%' ESCAPE '\'", F), (r"under LIKE 'a\_b' ESCAPE '\'", T),
    (r"'axb' LIKE 'a\_b' ESCAPE '\'", F), ("'axb' LIKE 'a_b'", T),
    (r"bslash LIKE 'a\\b' ESCAPE '\'", T), ("pct LIKE '100!%' ESCAPE '!'", T),
    ("s LIKE 'a%' ESCAPE ''", N), ("s LIKE 'ab' ESCAPE 'xy'", 1425),
    (r"s LIKE 'a\b' ESCAPE '\'", 1424), ("nul LIKE '%'", N), ("s LIKE nul", N),
    ("n10 LIKE '1%'", T), ("'a.c' LIKE 'a.c'", T), ("'abc' LIKE 'a.c'", F),
    ("'%' LIKE '%'", T), ("name LIKE 'O''%'", T), ("s LIKE up", F), ("'[a]' LIKE '[a]'", T),
    ("'a' || chr_nl || 'b' LIKE 'a%b'", T, {"chr_nl": "\n"}), ("s LIKE '%c'", T),
    ("s LIKE '%b%'", T), ("s LIKE 'a%c%'", T), ("nul NOT LIKE 'a'", N),
]

IN_LIST = [
    ("n1 IN (1, 2)", T), ("n1 IN (2, 3)", F), ("n1 IN (2, NULL)", N), ("n1 IN (1, NULL)", T),
    ("n1 NOT IN (2, 3)", T), ("n1 NOT IN (2, NULL)", N), ("n1 NOT IN (1, NULL)", F),
    ("nul IN (1, 2)", N), ("nul NOT IN (1)", N), ("s IN ('abc')", T), ("s IN ('ABC', 'x')", F),
    ("n1 IN ('1', '2')", T), ("num_s IN (10, 20)", T), ("n1 IN ('x', 1)", 1722),
    ("s IN (up, 'abc')", T), ("n10 IN (5 + 5)", T), ("dec IN (2.5)", T),
    ("n1 IN (nul, empty)", N),
]

BETWEEN = [
    ("n2 BETWEEN 1 AND 3", T), ("n2 BETWEEN 2 AND 2", T), ("n2 BETWEEN 3 AND 1", F),
    ("n2 NOT BETWEEN 3 AND 5", T), ("n2 NOT BETWEEN 1 AND 5", F), ("nul BETWEEN 1 AND 3", N),
    ("n2 BETWEEN nul AND 3", N), ("n2 BETWEEN nul AND 1", F), ("n2 NOT BETWEEN nul AND 1", T),
    ("s BETWEEN 'a' AND 'b'", T), ("'B' BETWEEN 'a' AND 'z'", F), ("num_s BETWEEN 9 AND 11", T),
    ("n2 BETWEEN 1 AND 3 AND n1 = 1", T), ("dec BETWEEN 2.5 AND 2.5", T),
    ("d1 BETWEEN '2024-01-01' AND d2", T),
]

COMPARISON = [
    ("dec = 2.5", T), ("dec = flt", T), ("flt > 2", T), ("n10 > 9", T), ("n10 >= 10", T),
    ("n10 < 10", F), ("n10 <= 9", F), ("n10 != 9", T), ("n10 ^= 10", F), ("n10 <> 10", F),
    ("0.1 + 0.2 = 0.3", T), ("neg < 0", T), ("-n1 = -1", T), ("- -n1 = 1", T),
    ("1e3 = 1000", T), (".5 = 0.5", T), ("big = 12345678901234567890", T,
                                            {"big": 12345678901234567890}),
    ("s = 'abc'", T), ("s = 'ABC'", F), ("s < 'abd'", T), ("up < s", T), ("'a' < 'ab'", T),
    ("s > 'ab'", T), ("name = 'O''Brien'", T), ("flag = 1", T, {"flag": True}),
    ("n10 < 1e100", T), ("dec > 1e-50", T), ("n10 - 1e100 < 0", T), ("dec < 2.50000000001", T),
    (":dml.get_value('NEW', 'REGION_ID').AccessNumber() = 2.00000000001", N),  # NULL here, FALSE for LCRs
]

CONVERSION = [
    ("num_s = 10", T), ("num_s > 9", T), ("'10' > '9'", F), ("n10 = '10'", T),
    ("sp = 42", T), ("bad_s = 1", 1722), ("n1 = 'abc'", 1722), ("s = 1", 1722),
    ("'1.5' = 1.5", T), ("'1e2' = 100", T), ("num_s + 1 = 11", T), ("'5' * '2' = 10", T),
    ("bad_s + 1 = 1", 1722), ("n1 = '+1'", T), ("n1 = '1.'", T), ("dec = '2.500'", T),
    ("exp_s > 0", 1722, {"exp_s": "1e99999999999999999999"}), ("TO_NUMBER('-1e99999999999999999999') < 0", 1722),
    ("n1 < -9.99e125", F),  # the last NUMBER literal (test_parser: past it is ORA-01426)
    ("n1 = d1", 932), ("raw = 1", 932),
]

ARITHMETIC = [
    ("1 + 2 * 3 = 7", T), ("(1 + 2) * 3 = 9", T), ("7 / 2 = 3.5", T), ("10 / 4 = 2.5", T),
    ("n1 / zero = 1", 1476), ("nul / zero IS NULL", T), ("nul + 1 IS NULL", T),
    ("n1 + nul IS NULL", T), ("nul * 0 IS NULL", T), ("-nul IS NULL", T),
    ("n10 - n2 * 2 = 6", T), ("n10 - n2 - n1 = 7", T), ("n10 / n2 / 5 = 1", T),
    ("flt * 2 = 5", T), ("dec * 2 = 5", T), ("dec + flt = 5", T), ("2 - -1 = 3", T),
    ("d1 + 1 > d1", T), ("d2 - d1 > 0", T), ("d2 - d1 = 0.5625", T), ("d1 + 0.5 > d2", F),
    ("d1 - 1 < d1", T), ("1 + d1 > d1", T), ("d1 * 2 IS NULL", 932),
    # past 9999-12-31 is ORA-01841, never a later date nor an aborted query
    ("d2 + 2913158 > d2", T), ("d2 + 2913159 > d2", 1841), ("d1 + n10 * 1000000 IS NULL", 1841),
    ("d1 + 9223372036854775808 IS NULL", 1841), ("d1 - -3000000 > d1", 1841), ("3000000 + d1 > d1", 1841),
    ("nul_d <= d1 - 3000000", N), ("nul_d <= (d1 - d_max) + d1", N, {"d_max": datetime(9999, 12, 31)}),
]

CONCATENATION = [
    ("s || 'd' = 'abcd'", T), ("s || n1 = 'abc1'", T), ("n1 || n2 = '12'", T),
    ("n1 || n2 = 12", T), ("'a' || 1 + 2 = 3", 1722), ("dec || '' = '2.5'", T),
    ("0.5 || 'x' = '.5x'", T), ("raw || '' = '02'", T), ("s || s || s = 'abcabcabc'", T),
    ("-1.50 || '' = '-1.5'", T),
]

DATES = [
    ("d1 < d2", T), ("d1 = '2024-01-15 10:30:00'", T), ("d2 = '2024-01-16'", T),
    ("d2 > '15-JAN-2024'", T), ("d2 = 'garbage'", 1861),
    ("TO_CHAR(d1, 'YYYY-MM-DD HH24:MI:SS') = '2024-01-15 10:30:00'", T),
    ("TO_CHAR(d1, 'DD-MON-YYYY') = '15-JAN-2024'", T), ("TO_CHAR(d1, 'Mon') = 'Jan'", T),
    ("TO_CHAR(d2, 'fmMonth') = 'January'", T), ("RTRIM(TO_CHAR(d2, 'month')) = 'january'", T),
    ("TO_CHAR(d1, 'HH:MI AM') = '10:30 AM'", T), ("TO_CHAR(d1) = '15-JAN-24'", T),
    ("TRUNC(d1) = TO_DATE('2024-01-15', 'YYYY-MM-DD')", T), ("d1 > SYSDATE", F),
    ("SYSDATE > d1", T), ("SYSTIMESTAMP > d1", T),
    ("TO_CHAR(SYSDATE, 'FF6') = '000000'", T), ("SYSTIMESTAMP >= SYSDATE", T),  # a DATE has no fractions ("TO_DATE('x', 'YYYY') IS NULL", 1861),
]

RAW = [
    ("raw = HEXTORAW('02')", T), ("raw = '02'", T), ("HEXTORAW('2') = raw", T),
    ("RAWTOHEX(raw) = '02'", T), ("HEXTORAW('zz') IS NULL", 1465), ("raw = HEXTORAW('0A')", F),
    ("raw <> HEXTORAW('0a')", T),
]

FUNCTIONS = [
    ("UPPER(s) = 'ABC'", T), ("LOWER(up) = s", T), ("INITCAP('hello wORLD') = 'Hello World'", T),
    ("INITCAP('o''brien-smith 1st') = 'O''Brien-Smith 1st'", T),
    ("SUBSTR(s, 2) = 'bc'", T), ("SUBSTR(s, 1, 2) = 'ab'", T), ("SUBSTR(s, -2) = 'bc'", T),
    ("SUBSTR(s, -2, 1) = 'b'", T), ("SUBSTR(s, 0, 1) = 'a'", T), ("SUBSTR(s, 2, 0) IS NULL", T),
    ("SUBSTR(s, -5) IS NULL", T), ("SUBSTR(s, nul) IS NULL", T), ("SUBSTR(12345, 2, 3) = '234'", T),
    ("LENGTH(s) = 3", T), ("LENGTH(12.50) = 4", T), ("INSTR(s, 'b') = 2", T),
    ("INSTR(s, 'z') = 0", T), ("INSTR('abcabc', 'b', 1, 2) = 5", T),
    ("INSTR('abcabc', 'b', -1) = 5", T), ("INSTR('abcabc', 'b', -1, 2) = 2", T),
    ("INSTR('abcabc', 'b', 3) = 5", T), ("INSTR('aaa', 'aa', 1, 2) = 2", T),
    ("INSTR('abcabc', 'c', -2) = 3", T), ("INSTR(s, 'b', 1, 0) = 1", 1428),
    ("TRIM('  x  ') = 'x'", T), ("LTRIM('  x ') = 'x '", T), ("RTRIM('xyy', 'y') = 'x'", T),
    ("LTRIM('xxay', 'x') = 'ay'", T), ("TRIM(LEADING '0' FROM '007') = '7'", T),
    ("TRIM(TRAILING 'x' FROM 'axx') = 'a'", T), ("TRIM(BOTH 'x' FROM 'xax') = 'a'", T),
    ("TRIM('x' FROM 'xax') = 'a'", T), ("TRIM(LEADING FROM '  a') = 'a'", T),
    ("LPAD('7', 3, '0') = '007'", T), ("LPAD(s, 2) = 'ab'", T), ("RPAD(s, 5, '*') = 'abc**'", T),
    ("LPAD(s, 5) = '  abc'", T), ("LPAD(s, 0) IS NULL", T), ("RPAD('a', 4, 'xy') = 'axyx'", T),
    ("REPLACE(s, 'b', 'X') = 'aXc'", T), ("REPLACE(s, 'b') = 'ac'", T),
    ("REPLACE(s, nul, 'X') = s", T), ("REPLACE(nul, 'a', 'b') IS NULL", T),
    ("NVL(nul, 5) = 5", T), ("NVL(n1, 5) = 1", T), ("NVL2(nul, 'a', 'b') = 'b'", T),
    ("NVL2(n1, 'a', 'b') = 'a'", T), ("COALESCE(nul, empty, 'z') = 'z'", T),
    ("COALESCE(nul, nul) IS NULL", T), ("COALESCE(n1, n1 / zero) = 1", T),
    ("DECODE(n1, 1, 'one', 2, 'two', 'many') = 'one'", T),
    ("DECODE(n10, 1, 'one', 'many') = 'many'", T), ("DECODE(nul, NULL, 'null', 'not') = 'null'", T),
    ("DECODE(n2, 1, 'one') IS NULL", T), ("DECODE(num_s, 10, 'ten') = 'ten'", T),
    ("DECODE(n1, 1, 'a', n1 / zero) = 'a'", T),
    # a value whose datatype depends on the row (NVL(text, number)) as DECODE's or GREATEST's argument
    ("DECODE(NVL(nul, 5), 5, 1) = 1", T), ("DECODE(NVL(s, 5), 'abc', 1) = 1", T), ("LEAST(NVL(num_s, 5), 7) = 7", F),
    ("GREATEST(NVL(s, 5)) = s", T), ("LEAST(COALESCE(s, -1e3)) BETWEEN 1 AND -3", 1722),
    ("ABS(neg) = 3", T), ("MOD(10, 3) = 1", T), ("MOD(-10, 3) = -1", T), ("MOD(10, 0) = 10", T),
    ("MOD(5.5, 2) = 1.5", T), ("ROUND(2.5) = 3", T), ("ROUND(-2.5) = -3", T),
    ("ROUND(1.2345, 2) = 1.23", T), ("ROUND(1.235, 2) = 1.24", T), ("ROUND(1250, -2) = 1300", T),
    ("ROUND(flt) = 3", T), ("FLOOR(hugef) = hugef", T, {"hugef": 1e20}), ("TRUNC(-hugef) < 0", T, {"hugef": 1e20}),
    ("CEIL(hugef) > flt", T, {"hugef": 1e20}), ("TRUNC(2.7) = 2", T), ("TRUNC(-2.7) = -2", T),
    ("TRUNC(1.239, 2) = 1.23", T), ("FLOOR(-2.5) = -3", T), ("CEIL(2.1) = 3", T),
    ("SIGN(neg) = -1", T), ("SIGN(zero) = 0", T), ("TO_NUMBER('12.5') = 12.5", T),
    ("TO_NUMBER('1,234', '9,999') = 1234", T), ("TO_NUMBER('abc') = 1", 1722),
    ("TO_CHAR(1234.5) = '1234.5'", T), ("TO_CHAR(1234.5, 'FM9,999.00') = '1,234.50'", T),
    ("TO_CHAR(5, '000') = ' 005'", T), ("TO_CHAR(0.5) = '.5'", T), ("TO_CHAR(n1) = '1'", T),
    ("TO_CHAR(12345, '999') = '####'", T), ("GREATEST(1, 5, 3) = 5", T),
    # number models are sluice.numformat's, as at a cursor (Oracle SQL Language Reference, "Number
    # Format Models"): FM drops the fraction's trailing zeros at 9 positions (the reference's table
    # of results: 123.45 'FM999.009' is '123.45', 123.0 is '123.00'), the decimal point stands
    # where the model has it, S / MI / PR / $ are written, a comma cannot begin a model
    ("TO_CHAR(12, 'FM999.99') = '12.'", T), ("TO_CHAR(123.45, 'FM999.009') = '123.45'", T),
    ("TO_CHAR(123.0, 'FM999.009') = '123.00'", T), ("TO_CHAR(n10, 'FM99.99') = '10.'", T),
    ("TO_CHAR(5, '9.') = ' 5.'", T), ("TO_CHAR(0, '9.') = ' 0.'", T), ("TO_CHAR(12, 'S99') = '+12'", T), ("TO_CHAR(-12, '99MI') = '12-'", T),
    ("TO_CHAR(-12, '99PR') = '<12>'", T), ("TO_CHAR(-12, '$99') = '-$12'", T), ("TO_CHAR(1, ',999') = '1'", 1481),
    ("LEAST('b', 'a', 'c') = 'a'", T), ("GREATEST(1, nul) IS NULL", T),
    ("CONCAT(s, nul) = 'abc'", T), ("UPPER(nul) IS NULL", T), ("ABS(nul) IS NULL", T),
    ("upper(s) = 'ABC'", T), ("LENGTH(n10 || s) = 5", T),
    # places and numbers far out of range: a value, never a Python decimal.InvalidOperation
    ("ROUND(n10, -2147483649) = 0", T), ("TRUNC(neg, -1e30) = 0", T), ("ROUND(dec, 2147483648) = dec", T),
    ("TO_CHAR(99999999999999999999999999999999999999, '9.9') = '####'", T),
    ("TO_CHAR(big * big, '9.9') = '####'", T, {"big": 12345678901234567890}),
    # positions beyond any string (and beyond a 32-bit integer)
    ("SUBSTR(s, 1e30) IS NULL", T), ("SUBSTR(s, -1e30, 2) IS NULL", T), ("SUBSTR(s, n10 * 1e10) IS NULL", T),
    ("INSTR(s, 'b', 2147483648) = 0", T), ("INSTR(s, 'b', 9223372036854775808) = 0", T),
    # a VARCHAR2 result is cut at 4000 characters without an error (LPAD(s, 1e30) fits in memory)
    ("LENGTH(LPAD(s, 5000, '*')) = 4000", T), ("SUBSTR(LPAD(s, 4002, '*'), 3999) = '*a'", T),
    ("LPAD(s, 1e30, '*') = RPAD('*', 4000, '*')", T), ("LENGTH(RPAD(s, n10 * 1e9)) = 4000", T),
    ("RPAD(s, 4001, 'xy') LIKE 'abcxy%x'", T), ("LENGTH(LPAD(s, 4003, '*') || 'z') = 4001", T),
    ("LPAD(s, 2147483648) IS NULL", F), ("RPAD(nul, 1e30) IS NULL", T),
]

MEMBERS = [
    (":msg.region = 'EUROPE'", T), (":msg.priority = '1'", T), (":MSG.REGION = 'EUROPE'", T),
    (":msg.missing IS NULL", T), (":nobody.region IS NULL", T), ("obj.price > 9", T),
    ("obj.qty IS NULL", T), ("obj.name LIKE 'wid%'", T), ("obj.nothing = 1", 904),
    ("TRUE IS NULL", 904), ('"msg".region = \'EUROPE\'', T),
]

EXISTS = [
    ("EXISTS (SELECT 1 FROM SYS.DUAL WHERE n1 = 1)", T),
    ("EXISTS (SELECT 1 FROM DUAL WHERE nul = 1)", F),
    ("NOT EXISTS (SELECT 1 FROM SYS.DUAL WHERE nul = 1)", T),
    ("NOT EXISTS (SELECT 1 FROM SYS.DUAL WHERE n1 = 1)", F),
    ("EXISTS (SELECT * FROM DUAL)", T),
    ("nul IS NULL AND NOT EXISTS (SELECT 1 FROM SYS.DUAL WHERE (nul = 2))", T),
]

TYPED_NULLS = [
    ("nul_n = 1", N), ("nul_n + 1 IS NULL", T), ("nul_n IN (1, NULL)", N), ("nul_d < d1", N),
    ("nul_d + 1 IS NULL", T), ("nul_r = raw", N), ("NVL(nul_n, 7) = 7", T),
    ("COALESCE(nul_d, d1) = d1", T), ("nul_n || 'x' = 'x'", T), ("nul_d - d1 IS NULL", T),
    ("LENGTH(nul_r) IS NULL", T), ("TO_CHAR(nul_d, 'YYYY') IS NULL", T), ("UPPER(nul_n) IS NULL", T),
    ("nul_n BETWEEN 1 AND 2", N), ("NOT nul_n IN (1, 2)", N), ("nul_n = 'abc'", N), ("bad_s = nul_n", N),
    ("nul_n >= 12345678901234567890", N), ("9223372036854775808 <= nul_n", N), ("nul_n < 3000000000.5", N),
    ("nul_n NOT BETWEEN 12345678901234567890 AND n10", N),
    ("LEAST(n1, nul_n) IS NULL", T), ("nul_r IS NULL AND nul_d IS NULL", T),
    ("INSTR(s, 'b', 1, DECODE(n1, 'x', 1)) IS NULL", 1722), ("TRUNC(n10, DECODE(n1, 'x', 1)) IS NULL", 1722),
    ("ROUND(n10, DECODE(n1, 'x', 1)) IS NULL", 1722),
    # a NULL places / length argument makes the function NULL, whatever the target clamps
    ("ROUND(dec, nul_n) IS NULL", T), ("TRUNC(n10, nul_n) IS NULL", T), ("ROUND(n1, nul_n) = 1", N),
]

# Where the Python compiler raises, every other target must give NULL (the rule is NULL);
# Python's evaluation order decides whether a bad value is reached at all.
ERROR_PATHS = [
    ("bad_s > 0", 1722), ("n1 = 2 AND bad_s = 1", F), ("bad_s = 1 AND n1 = 2", 1722),
    ("n1 = 1 OR bad_s = 1", T), ("bad_s = 1 OR n1 = 1", 1722), ("nul = 1 AND bad_s = 1", 1722),
    ("nul = bad_s + 1", N), ("bad_s + 1 = nul", 1722), ("nul BETWEEN bad_s + 1 AND 2", 1722),
    ("nul IN (bad_s + 1)", N), ("n1 IN (2, bad_s + 1, 1)", 1722), ("n1 IN (1, bad_s + 1)", T),
    ("COALESCE(n1, bad_s + 1) = 1", T), ("COALESCE(nul_n, bad_s + 1) = 1", 1722),
    ("NVL(n1, bad_s + 1) = 1", 1722), ("NVL2(n1, 1, bad_s + 1) = 1", 1722),
    ("DECODE(n1, 2, bad_s + 1, 1, 5) = 5", T), ("DECODE(n1, 1, bad_s + 1, 5) = 5", 1722),
    ("DECODE(bad_s, 1, 'x', 'y') = 'y'", 1722), ("DECODE(s, 'abc', 1, 2) = 1", T),
    ("NOT (bad_s = 1)", 1722), ("EXISTS (SELECT 1 FROM DUAL WHERE bad_s = 1)", 1722),
    ("num_s * 2 = 20", T), ("-num_s = -10", T), ("-bad_s IS NULL", 1722),
    ("n1 / zero IS NULL", 1476), ("zero / n1 = 0", T), ("MOD(n10, zero) = 10", T),
    ("SUBSTR(s, num_s) IS NULL", T), ("SUBSTR(s, bad_s) IS NULL", 1722),
    ("LPAD(s, bad_s) IS NULL", 1722), ("ROUND(bad_s) IS NULL", 1722), ("ABS(num_s) = 10", T),
    ("d1 = n1", 932), ("raw = d1", 932), ("d1 + raw IS NULL", 932), ("raw = s", F),
    ("raw = bad_s", 1465), ("HEXTORAW(num_s) = HEXTORAW('10')", T), ("RAWTOHEX(s) = '0ABC'", T),
    ("TO_NUMBER(num_s) = 10", T), ("TO_NUMBER(bad_s) IS NULL", 1722), ("TO_NUMBER(sp) = 42", T),
    ("LEAST(n10, bad_s) IS NULL", 1722), ("INSTR(s, 'b', 1, n1 - 1) = 2", 1428),
]

COLUMN_FUNCTIONS = [
    ("UPPER(n10) = '10'", T), ("TO_CHAR(n10) = num_s", T), ("TO_CHAR(dec) = '2.5'", T),
    ("TO_CHAR(flt) = '2.5'", T), ("TO_CHAR(neg) = '-3'", T), ("s || dec = 'abc2.5'", T),
    ("d2 || '' = '16-JAN-24'", T), ("raw || s = '02abc'", T), ("GREATEST(n1, num_s) = 10", T),
    ("GREATEST(s, n1) = 'abc'", T), ("GREATEST(d1, d2) = d2", T), ("INSTR(s, 'c', 2) = 3", T),
    ("GREATEST(n10) = 10", T), ("LEAST(s) = 'abc'", T), ("LEAST(nul_n) IS NULL", T),
    ("INITCAP(name) = 'O''Brien'", T), ("INITCAP(under) = 'A_B'", T),
    ("LOWER(up) || UPPER(s) = 'abcABC'", T), ("TRIM(sp) = '42'", T), ("LTRIM(s, 'a') = 'bc'", T),
    ("RTRIM(s, 'bc') = 'a'", T), ("LTRIM(s, 'abc') IS NULL", T), ("LPAD(s, 5, '*') = '**abc'", T),
    ("RPAD(s, 2) = 'ab'", T), ("LPAD(s, n2) = 'ab'", T), ("REPLACE(s, 'abc') IS NULL", T),
    ("REPLACE(s, 'b', nul) = 'ac'", T), ("REPLACE(s, empty, 'x') = 'abc'", T),
    ("LENGTH(raw) = 2", T), ("SIGN(dec) = 1", T), ("FLOOR(dec) = 2", T), ("CEIL(dec) = 3", T),
    ("ROUND(dec) = 3", T), ("TRUNC(dec) = 2", T), ("ROUND(dec, 1) = 2.5", T),
    ("MOD(n10, n2 + 1) = 1", T), ("MOD(neg, n2) = -1", T), ("SUBSTR(s, -2, n1) = 'b'", T),
    ("SUBSTR(s, n2, zero) IS NULL", T), ("LENGTH(s || n10) = 5", T),
    ("TRUNC(d1) = '2024-01-15'", T), ("d2 - n1 < d1", T), ("d2 - d1 > n1", F),
    ("d1 + n1 = TO_DATE('2024-01-16 10:30:00', 'YYYY-MM-DD HH24:MI:SS')", T),
    ("TO_CHAR(d1, 'FMDD') = '15'", T), ("TO_CHAR(d2, 'DD/MM/YYYY') = '16/01/2024'", T),
    ("TO_CHAR(d2, 'DY') = 'TUE'", T), ("TO_CHAR(d2, 'Day') = 'Tuesday  '", T),
    ("TO_CHAR(d1, 'Q') = '1'", T), ("TO_CHAR(d2, 'D') = '3'", T), ("TO_CHAR(d1, 'DDD') = '015'", T),
    ("TO_CHAR(d1, 'HH12:MI:SS PM') = '10:30:00 AM'", T),
    ("TO_CHAR(d1, 'YYYY\"T\"HH24') = '2024T10'", T), ("SYSDATE - d1 > 0", T),
]

MORE_LIKE = [
    ("s LIKE 'a_c'", T), ("s LIKE '_'", F), ("s LIKE '___'", T), ("up LIKE 'a%'", F),
    ("name LIKE '%''%'", T), (r"bslash LIKE 'a\b'", T), (r"bslash LIKE 'a\%'", T),
    ("pct LIKE '%!%' ESCAPE '!'", T), ("under LIKE '%#_%' ESCAPE '#'", T),
    ("s LIKE '%#_%' ESCAPE '#'", F), ("s LIKE pat", T), ("up LIKE pat", F), ("s NOT LIKE pat", F),
    ("nul LIKE pat", N), (r"s LIKE pat ESCAPE '\'", T), (r"s LIKE pat_bad ESCAPE '\'", 1424),
    ("bslash LIKE pat_bad", F), ("pct LIKE pat", F), ("n10 LIKE num_s", T),
    ("d2 LIKE '16-JAN%'", T), ("raw LIKE '0%'", T), ("s LIKE 'a%' AND up NOT LIKE 'a%'", T),
    ("'a*c' LIKE 'a*c'", T), ("s LIKE '[a]%'", F), ("'a?c' LIKE 'a?_'", T),
]

CASES = (NULL_LOGIC + EMPTY_IS_NULL + LIKE + IN_LIST + BETWEEN + COMPARISON + CONVERSION
         + ARITHMETIC + CONCATENATION + DATES + RAW + FUNCTIONS + MEMBERS + EXISTS
         + TYPED_NULLS + ERROR_PATHS + COLUMN_FUNCTIONS + MORE_LIKE)


# --- the rule conditions printed in seed 000 (Streams 10.2, ch. 6), verbatim ----
# Labels say where each comes from; trailing blanks at line ends are dropped.
SEED_RULES = [
    ("global dml", "(:dml.is_null_tag() = 'Y' )"),
    ("global ddl", "(:ddl.is_null_tag() = 'Y' )"),
    ("global dml, tagged", """(( :dml.get_source_database_name()>=' ' OR
:dml.get_source_database_name()<=' ') )"""),
    ("global ddl, tagged", """(( :ddl.get_source_database_name()>=' ' OR
:ddl.get_source_database_name()<=' ') )"""),
    ("schema dml", """((:dml.get_object_owner() = 'HR') and :dml.is_null_tag() = 'Y'
and :dml.get_source_database_name() = 'DBS1.NET' )"""),
    ("schema ddl", """((:ddl.get_object_owner() = 'HR' or :ddl.get_base_table_owner() = 'HR')
and :ddl.is_null_tag() = 'Y' and :ddl.get_source_database_name() = 'DBS1.NET' )"""),
    ("table dml", """(((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'LOCATIONS'))
and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )"""),
    ("table ddl", """(((:ddl.get_object_owner() = 'HR' and :ddl.get_object_name() = 'COUNTRIES')
or (:ddl.get_base_table_owner() = 'HR'
and :ddl.get_base_table_name() = 'COUNTRIES')) and :ddl.is_null_tag() = 'Y'
and :ddl.get_source_database_name() = 'DBS1.NET' )"""),
    ("subset insert", """:dml.get_object_owner()='HR' AND :dml.get_object_name()='REGIONS'
AND :dml.is_null_tag()='Y' AND :dml.get_source_database_name()='DBS1.NET'
AND :dml.get_command_type() IN ('UPDATE','INSERT')
AND (:dml.get_value('NEW','"REGION_ID"') IS NOT NULL)
AND (:dml.get_value('NEW','"REGION_ID"').AccessNumber()=2)
AND (:dml.get_command_type()='INSERT'
OR ((:dml.get_value('OLD','"REGION_ID"') IS NOT NULL)
AND (((:dml.get_value('OLD','"REGION_ID"').AccessNumber() IS NOT NULL)
AND NOT (:dml.get_value('OLD','"REGION_ID"').AccessNumber()=2))
OR ((:dml.get_value('OLD','"REGION_ID"').AccessNumber() IS NULL)
AND NOT EXISTS (SELECT 1 FROM SYS.DUAL
WHERE (:dml.get_value('OLD','"REGION_ID"').AccessNumber()=2))))))"""),
    ("subset update", """:dml.get_object_owner()='HR' AND :dml.get_object_name()='REGIONS'
AND :dml.is_null_tag()='Y' AND :dml.get_source_database_name()='DBS1.NET'
AND :dml.get_command_type()='UPDATE'
AND (:dml.get_value('NEW','"REGION_ID"') IS NOT NULL)
AND (:dml.get_value('OLD','"REGION_ID"') IS NOT NULL)
AND (:dml.get_value('OLD','"REGION_ID"').AccessNumber()=2)
AND (:dml.get_value('NEW','"REGION_ID"').AccessNumber()=2)"""),
    ("subset delete", """:dml.get_object_owner()='HR' AND :dml.get_object_name()='REGIONS'
AND :dml.is_null_tag()='Y' AND :dml.get_source_database_name()='DBS1.NET'
AND :dml.get_command_type() IN ('UPDATE','DELETE')
AND (:dml.get_value('OLD','"REGION_ID"') IS NOT NULL)
AND (:dml.get_value('OLD','"REGION_ID"').AccessNumber()=2)
AND (:dml.get_command_type()='DELETE'
OR ((:dml.get_value('NEW','"REGION_ID"') IS NOT NULL)
AND (((:dml.get_value('NEW','"REGION_ID"').AccessNumber() IS NOT NULL)
AND NOT (:dml.get_value('NEW','"REGION_ID"').AccessNumber()=2))
OR ((:dml.get_value('NEW','"REGION_ID"').AccessNumber() IS NULL)
AND NOT EXISTS (SELECT 1 FROM SYS.DUAL
WHERE (:dml.get_value('NEW','"REGION_ID"').AccessNumber()=2))))))"""),
    ("subset dml_condition", "region_id=2"),
    ("message rule, as given", ":msg.region = 'EUROPE' AND  :msg.priority = '1' "),
    ("message rule", """:"VAR$_52".region = 'EUROPE' AND  :"VAR$_52".priority = '1'"""),
    ("message rule americas", """:"VAR$_56".region = 'AMERICAS' AND  :"VAR$_56".priority = '2'"""),
    ("message rule, evaluation context", ":msg.region = 'EUROPE' AND :msg.priority = '1'"),
    ("message rule, unquoted", ":VAR$_52.region = 'EUROPE' AND  :VAR$_52.priority = '1'"),
    ("schema dml, apply", """((:dml.get_object_owner() = 'HR') and :dml.is_null_tag() = 'Y'
and :dml.get_source_database_name() = 'DBS1.NET' )"""),
    ("table dml, negative", """(((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'JOB_HISTORY'))
and :dml.get_source_database_name() = 'DBS1.NET' )"""),
    ("and_condition as given", ":lcr.get_tag() = HEXTORAW('02')"),
    ("and_condition dml", """(((((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'DEPARTMENTS'))
 and :dml.get_source_database_name() = 'DBS1.NET' ))
and (:dml.get_tag() = HEXTORAW('02')))"""),
    ("and_condition ddl", """(((((:ddl.get_object_owner() = 'HR' and :ddl.get_object_name() = 'DEPARTMENTS')
or (:ddl.get_base_table_owner() = 'HR'
and :ddl.get_base_table_name() = 'DEPARTMENTS'))
and :ddl.get_source_database_name() = 'DBS1.NET' ))
and (:ddl.get_tag() = HEXTORAW('02')))"""),
    ("not job_history", ":dml.get_object_name() != 'JOB_HISTORY'"),
    ("insert only", """:dml.get_command_type() = 'INSERT' AND :dml.get_object_owner() = 'HR'
AND :dml.get_object_name() = 'EMPLOYEES' AND :dml.is_null_tag() = 'Y'"""),
    ("insert or update", """:dml.get_object_owner() = 'HR' AND :dml.get_object_name() = 'DEPARTMENTS' AND
:dml.is_null_tag() = 'Y' AND (:dml.get_command_type() = 'INSERT' OR
:dml.get_command_type() = 'UPDATE')"""),
    ("except delete", """:dml.get_object_owner() = 'HR' AND :dml.get_object_name() = 'DEPARTMENTS' AND
:dml.is_null_tag() = 'Y' AND :dml.get_command_type() != 'DELETE'"""),
    ("compatible > 9.2", ":dml.GET_COMPATIBLE() > DBMS_STREAMS.COMPATIBLE_9_2()"),
    ("compatible <= 10.1", ":dml.GET_COMPATIBLE() <= DBMS_STREAMS.COMPATIBLE_10_1()"),
    ("not regions dml", """ (:dml.get_object_owner() = 'HR' AND NOT  :dml.get_object_name() = 'REGIONS') AND  :dml.is_null_tag() = 'Y' """),
    ("not regions ddl", """ ((:ddl.get_object_owner() = 'HR' OR  :ddl.get_base_table_owner() =       'HR') AND NOT  :ddl.get_object_name() = 'REGIONS') AND  :ddl.is_null_tag() = 'Y' """),
    ("mixed case name", ":dml.get_object_name() = 'Regions'"),
    ("like job dml", """(:dml.get_object_owner() = 'HR' AND :dml.get_object_name() LIKE 'JOB%')
AND :dml.is_null_tag() = 'Y'"""),
    ("like job ddl", """((:ddl.get_object_owner() = 'HR' OR :ddl.get_base_table_owner() =       'HR')
AND :ddl.get_object_name() LIKE 'JOB%') AND :ddl.is_null_tag() = 'Y'"""),
    ("m is null", ":m IS NULL"),
    ("undefined m is null", ":dml.get_object_owner() = 'HR' AND :m IS NULL"),
    ("m = 5", ":m = 5"),
    ("undefined m = 5", ":dml.get_object_owner() = 'HR' AND :m = 5"),
    ("function of :dml", "my_function(:dml) = 'Y'"),
]

# The seed prints the two NOT rules run together, with identifiers broken across
# lines by the page layout; verbatim, that text is not a valid condition.
SEED_GARBLED = """(:dml.get_object_owner() = 'HR' AND NOT :dml.get_object_name() = 'REGIONS')
AND :dml.is_null_tag() = 'Y' ((:ddl.get_object_owner() = 'HR' OR :ddl.get_base_
table_owner() =         'HR') AND NOT :ddl.get_object_name() = 'REGIONS') AND :ddl.is_
null_tag() = 'Y'"""


# --- LCRs for the differential test -------------------------------------------------
# Each condition of the differential corpus runs against every row: these LCRs
# (sluice.streams.lcr objects built from these arguments; the typed targets read
# them through sluice.rules.compile.typed.lcrschema.lcr_row) and the CONTEXT variants.

def _lcr(kind="ROW", owner="HR", name="REGIONS", command="INSERT", tag=None, source="DBS1.NET",
         old=None, new=None, **extra):
    args = {"source_database_name": source, "command_type": command, "object_owner": owner,
            "object_name": name, "tag": tag, "transaction_id": "1.2.3", "scn": 1000,
            "commit_scn": 1005}
    if kind == "ROW":
        args.update(old_values=old, new_values=new)
    else:
        args.update(object_type="TABLE", ddl_text=f"{command} {owner}.{name}")
    args.update(extra)
    return kind, args


LCR_ROWS = [
    _lcr(new={"REGION_ID": 2, "REGION_NAME": "Europe"}),
    _lcr(command="UPDATE", old={"REGION_ID": 3}, new={"REGION_ID": 2}),
    _lcr(command="UPDATE", old={"REGION_ID": 2}, new={"REGION_ID": 2}),
    _lcr(command="UPDATE", old={"REGION_ID": 2}, new={"REGION_ID": None}),
    _lcr(command="UPDATE", old={"REGION_ID": 2, "REGION_NAME": "Asia"}, new={"REGION_NAME": "Asia!"}),
    _lcr(command="DELETE", old={"REGION_ID": Decimal("2.0"), "REGION_NAME": ""}),
    _lcr(command="UPDATE", old={"REGION_ID": "abc"}, new={"REGION_ID": "2"}),
    _lcr(name="EMPLOYEES", tag=b"\x02", new={"EMPLOYEE_ID": 7, "HIRED": datetime(2024, 1, 15, 10, 30),
                                               "PHOTO": b"\x01\xff", "RATE": 1.5}),
    _lcr(name="DEPARTMENTS", command="UPDATE", tag=b"\x02", old={}, new={}),
    _lcr(name="JOB_HISTORY", command="DELETE", scn=99, old={'"Region_Id"': 2}),
    _lcr(owner="OE", name="ORDERS", source="DBS2.NET", tag=b"\x01", new={"REGION_ID": 2.0}),
    _lcr(name="Regions", source="", tag=b"", new={"REGION_ID": 1}),
    _lcr(kind="DDL", name="COUNTRIES", command="CREATE TABLE", base_table_owner="HR",
         base_table_name="COUNTRIES"),
    _lcr(kind="DDL", owner=None, name=None, command="ALTER TABLE", base_table_owner="HR",
         base_table_name="COUNTRIES", source="DBS1.NET"),
    _lcr(kind="DDL", name="DEPARTMENTS", command="ALTER TABLE", tag=b"\x02"),
    _lcr(kind="DDL", name="REGIONS", command="DROP TABLE"),
]

# Message variables of seed 000's message rules, as one more context variant.
MESSAGE_VARIABLES = {"VAR$_52": {"region": "EUROPE", "priority": 1},
                     "VAR$_56": {"region": "AMERICAS", "priority": 2}}

LCR_CONDITIONS = [
    ":dml.get_value('NEW', 'REGION_NAME').AccessVarchar2() = 'Asia!'",
    ":dml.get_value('NEW', 'REGION_ID').AccessNumber() = 2",        # NEW falls back to OLD on UPDATE
    ":dml.get_value('NEW', 'REGION_ID', 'N') IS NULL",
    ":dml.get_value('NEW', 'HIRED').AccessDate() < TO_DATE('2024-02-01', 'YYYY-MM-DD')",
    ":dml.get_value('NEW', 'HIRED').AccessTimestamp() = TO_DATE('2024-01-15 10:30', 'YYYY-MM-DD HH24:MI')",
    ":dml.get_value('NEW', 'PHOTO').AccessRaw() = HEXTORAW('01FF')",
    ":dml.get_value('NEW', 'RATE').AccessNumber() * 2 = 3",
    ":dml.get_value('NEW', 'EMPLOYEE_ID').AccessVarchar2() IS NULL",   # ORA-22626: a NUMBER
    ":dml.get_value('OLD', 'REGION_ID').AccessNumber() = 2 OR :dml.get_object_name() = 'EMPLOYEES'",
    ":dml.get_value('NEW', 'region_id').AccessNumber() = 2",
    ":dml.get_value('OLD', '\"REGION_ID\"').AccessVarchar2() = 'abc'",
    ":dml.get_value('OLD', 'REGION_NAME').AccessVarchar2() IS NULL",
    ":dml.get_value('NEW', 'REGION_ID') IS NULL",
    ":dml.get_value('NEW', 'MISSING_COL') IS NULL",
    ":dml.get_value('OLD', 'REGION_ID').AccessNumber() IS NULL",
    ":dml.get_value('OLD', '\"Region_Id\"').AccessNumber() = 2",
    ":dml.get_value('NEW','REGION_ID').AccessNumber() + 1 = 3",
    ":lcr.get_object_owner() = 'HR'",
    ":ddl.get_object_type() = 'TABLE'",
    ":dml.get_scn() > 100", ":dml.get_commit_scn() >= :dml.get_scn()",
    ":dml.get_transaction_id() LIKE '1.%'",
    ":dml.is_null_tag() = 'N' AND :dml.get_tag() <> HEXTORAW('01')",
    ":dml.get_tag() IS NULL", "RAWTOHEX(:dml.get_tag()) = '02'",
    ":dml.get_object_name() IN ('REGIONS', 'EMPLOYEES')",
    "UPPER(:dml.get_object_name()) = 'REGIONS'",
    ":dml.get_command_type() != 'DELETE' OR :dml.get_value('OLD', 'REGION_ID').AccessNumber() > 1",
    ":dml.get_source_database_name() IS NULL",
    ":ddl.get_base_table_name() = 'COUNTRIES' AND :ddl.get_object_owner() IS NULL",
    "NOT (:lcr.get_command_type() = 'INSERT')",
    ":lcr.get_compatible() BETWEEN 1 AND 3",
    ":dml.get_object_name() LIKE 'J%' OR :ddl.get_object_name() LIKE '%S'",
]
