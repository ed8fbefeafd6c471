"""Logical change records: ``SYS.LCR$_ROW_RECORD`` and ``SYS.LCR$_DDL_RECORD``.

An LCR describes one change at a source database: a row change (row LCR) or a
DDL statement (DDL LCR).  Rule conditions read LCRs through their member
functions (seed 000: ``:dml.get_object_owner() = 'HR'``,
``:dml.get_value('NEW','"REGION_ID"').AccessNumber() = 2``), so the members
keep Oracle's names in lower case and Oracle's results:

* ``is_null_tag()`` is ``'Y'`` / ``'N'``; a tag is RAW (``bytes``);
* ``get_value`` returns an :class:`~sluice.rules.engine.anydata.AnyData` (NULL when
  the LCR has no such column) and, for ``'NEW'`` on an UPDATE with
  ``use_old='Y'`` (the default), falls back to the old value of a column the
  update did not change — which is what subset rules rely on;
* ``get_compatible()`` is one of the ``COMPATIBLE_x_y`` constants below, the
  same numbers ``DBMS_STREAMS.COMPATIBLE_x_y()`` yields in rule conditions.

Column names follow Oracle's identifier rule: ``'"REGION_ID"'`` is exact,
``'region_id'`` means ``REGION_ID``.  Object owner and name are kept exactly as
given: seed 000 ("Rule Conditions Using the NOT Logical Condition") requires
their case to match the data dictionary.  ``source_database_name`` is a global
name and so is upper-cased.
"""

from __future__ import annotations

import math
import re
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Callable, Iterable, Mapping

from ..charset import checked
from ..errors import ora
from ..names import canonical
from ..rules.engine.anydata import AnyData
from ..sqlfunctions import FUNCTIONS, hextoraw

__all__ = [
    "RowLCR", "DDLLCR", "RowUnit", "COMPATIBLE_9_2", "COMPATIBLE_10_1", "COMPATIBLE_10_2",
    "COMPATIBLE_11_1", "COMPATIBLE_11_2", "COMPATIBLE_12_1", "COMPATIBLE_12_2",
    "ROW_COMMAND_TYPES", "EXTRA_ATTRIBUTES", "LCR_EXECUTOR", "row_compatible",
]

# LCR.EXECUTE(): an apply process sets this while it runs a handler (DML, DDL, error or
# message handler); the LCR is then applied in the apply's own target transaction.  Outside
# a handler there is nowhere to apply it (ORA-26714).
LCR_EXECUTOR: "ContextVar[Callable[[Any, bool], None] | None]" = ContextVar("LCR_EXECUTOR", default=None)

# DBMS_STREAMS.COMPATIBLE_x_y(): taken from the rule functions so both agree.
COMPATIBLE_9_2, COMPATIBLE_10_1, COMPATIBLE_10_2, COMPATIBLE_11_1, COMPATIBLE_11_2, \
    COMPATIBLE_12_1, COMPATIBLE_12_2 = (FUNCTIONS[f"DBMS_STREAMS.COMPATIBLE_{v}"].impl() for v in
                                        ("9_2", "10_1", "10_2", "11_1", "11_2", "12_1", "12_2"))

ROW_COMMAND_TYPES = ("INSERT", "UPDATE", "DELETE", "LOB ERASE", "LOB WRITE", "LOB TRIM")
EXTRA_ATTRIBUTES = ("ROW_ID", "SERIAL#", "SESSION#", "THREAD#", "TX_NAME", "USERNAME")
# Column types a 9.2 database cannot hold (introduced with 10.1).
_TYPES_10_1 = frozenset({"SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE"})


@dataclass(slots=True)
class RowUnit:
    """``SYS.LCR$_ROW_UNIT``: one column of a row LCR's old or new values."""

    column_name: str
    data: AnyData
    lob_information: int | None = None
    lob_offset: int | None = None
    lob_operation_size: int | None = None
    long_information: int | None = None


def _column(name: Any) -> str:
    return canonical(name, "column name")


def _row_list(values: Any) -> dict[str, RowUnit]:
    """``LCR$_ROW_LIST`` from a mapping, RowUnits or ``(name, value)`` pairs."""
    if values is None:
        return {}
    if isinstance(values, (str, bytes, bytearray)) or not isinstance(values, (Mapping, Iterable)):
        raise ora(6502, f"a row list must be a mapping, RowUnits or (name, value) pairs, "
                        f"not {type(values).__name__}")
    items = values.items() if isinstance(values, Mapping) else values
    out: dict[str, RowUnit] = {}
    for item in items:
        if isinstance(item, RowUnit):
            unit = RowUnit(_column(item.column_name), AnyData.of(item.data), item.lob_information,
                           item.lob_offset, item.lob_operation_size, item.long_information)
        else:
            if isinstance(item, (str, bytes, bytearray)) or not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ora(6502, f"a row list's item must be a RowUnit or a (name, value) pair, not {item!r:.60}")
            name, value = item
            unit = RowUnit(_column(name), AnyData.of(value))
        if unit.column_name in out:
            raise ora(957, unit.column_name)
        out[unit.column_name] = unit
    return out


def _tag(tag: Any) -> bytes | None:
    if tag is None or isinstance(tag, bytes):
        return tag or None
    if isinstance(tag, bytearray):
        return bytes(tag) or None
    return hextoraw(tag)  # hex text, as HEXTORAW would read it


# The members' types are LCR$_ROW_RECORD's and LCR$_DDL_RECORD's: VARCHAR2 (CLOB for the
# DDL text), NUMBER for the SCNs, DATE for the source time.  A value of another type is
# ORA-06502 when it is given (construct or a setter), not a failure when the LCR is
# enqueued or stored.  (Oracle converts a number to VARCHAR2 implicitly; python-oracledb
# does not, and a number as an owner or table name is a mistake, not a name.)

def _text(value: Any, member: str) -> str | None:
    """A character member's value; '' is NULL, as everywhere in Oracle."""
    if isinstance(value, str):
        return checked(value) or None
    if value is None:
        return None
    raise ora(6502, f"{member} must be a character string, not {type(value).__name__}")


_WHOLE_NUMBER = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


def _scn(value: Any, member: str) -> int | None:
    """An SCN member's value: a whole number (an integral float or Decimal is taken as one)."""
    if type(value) is int or value is None:
        return value
    if isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value):
        return int(value)           # PL/SQL converts such text to the NUMBER it names
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        finite = math.isfinite(value) if isinstance(value, float) else \
            isinstance(value, int) or value.is_finite()
        if finite and value == int(value):
            return int(value)
    raise ora(6502, f"{member} must be a whole number (an SCN), not {value!r:.60}")


def _time(value: Any, member: str) -> datetime | None:
    """A DATE member's value: a datetime (a date is its midnight)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime.combine(value, time())
    raise ora(6502, f"{member} must be a datetime, not {type(value).__name__}")


def _global_name(name: Any) -> str | None:
    text = _text(name, "source_database_name")
    return None if text is None else text.upper()


def _value_type(value_type: Any, allow_both: bool = False) -> str:
    vt = str(value_type).upper() if value_type is not None else ""
    if vt in ("OLD", "NEW") or (allow_both and vt == "*"):
        return vt
    raise ora(6502, f"value_type must be 'OLD' or 'NEW'{' or *' if allow_both else ''}, not {value_type!r}")


def row_compatible(has_extra: bool, type_names: Any) -> int:
    """``get_compatible()`` of a row LCR from what decides it: extra attributes, its
    columns' ANYDATA type names (also for readers of the stored form)."""
    if has_extra:
        return COMPATIBLE_10_2
    return COMPATIBLE_10_1 if any(t in _TYPES_10_1 for t in type_names) else COMPATIBLE_9_2


class _LCR:
    """What row and DDL LCRs share (Oracle's "common subprograms for LCRs")."""

    __slots__ = ("_source_database_name", "_command_type", "_object_owner", "_object_name",
                 "_tag", "_transaction_id", "_scn", "_commit_scn", "_source_time", "_extra")

    oracle_type = ""

    def _init_common(self, source_database_name: Any, command_type: Any, object_owner: Any,
                     object_name: Any, tag: Any, transaction_id: Any, scn: Any,
                     commit_scn: Any, source_time: Any) -> None:
        self._source_database_name = _global_name(source_database_name)
        self._command_type = None
        self.set_command_type(command_type)
        self._object_owner = _text(object_owner, "object_owner")
        self._object_name = _text(object_name, "object_name")
        self._tag = _tag(tag)
        self._transaction_id = _text(transaction_id, "transaction_id")
        self._scn = _scn(scn, "scn")
        self._commit_scn = _scn(commit_scn, "commit_scn")
        self._source_time = _time(source_time, "source_time")
        self._extra: dict[str, AnyData] = {}

    @classmethod
    def _trusted(cls, source_database_name: str, command_type: str, object_owner: str,
                 object_name: str, tag: bytes | None, transaction_id: str, scn: Any,
                 commit_scn: Any, source_time: Any) -> Any:
        """An LCR from a producer whose values are already canonical (the capture's
        decoder, a stored LCR): nothing is checked; a row LCR's column lists and a DDL
        LCR's own members are the caller's to set."""
        lcr = cls.__new__(cls)
        lcr._source_database_name, lcr._command_type = source_database_name, command_type
        lcr._object_owner, lcr._object_name, lcr._tag = object_owner, object_name, tag
        lcr._transaction_id, lcr._scn, lcr._commit_scn = transaction_id, scn, commit_scn
        lcr._source_time, lcr._extra = source_time, {}
        return lcr

    # -- getters used in rule conditions -----------------------------------------
    def get_command_type(self) -> str | None:
        return self._command_type

    def get_object_owner(self) -> str | None:
        return self._object_owner

    def get_object_name(self) -> str | None:
        return self._object_name

    def get_source_database_name(self) -> str | None:
        return self._source_database_name

    def get_tag(self) -> bytes | None:
        return self._tag

    def is_null_tag(self) -> str:
        return "Y" if self._tag is None else "N"

    def get_transaction_id(self) -> str | None:
        return self._transaction_id

    def get_scn(self) -> Any:
        return self._scn

    def get_commit_scn(self) -> Any:
        return self._commit_scn

    def get_source_time(self) -> Any:
        return self._source_time

    def get_extra_attribute(self, attribute_name: str) -> AnyData | None:
        """``row_id``, ``serial#``, ``session#``, ``thread#``, ``tx_name`` or ``username``."""
        return self._extra.get(self._extra_name(attribute_name))

    # -- setters (Oracle has no setter for SCN or transaction id) ----------------
    def set_command_type(self, command_type: Any) -> None:
        if not isinstance(command_type, str) or not command_type.strip():
            raise ora(6502, f"invalid command type {command_type!r}")
        self._command_type = " ".join(checked(command_type).upper().split())

    def set_object_owner(self, object_owner: str | None) -> None:
        self._object_owner = _text(object_owner, "object_owner")

    def set_object_name(self, object_name: str | None) -> None:
        self._object_name = _text(object_name, "object_name")

    def set_source_database_name(self, source_database_name: str | None) -> None:
        self._source_database_name = _global_name(source_database_name)

    def set_tag(self, tag: Any) -> None:
        self._tag = _tag(tag)

    def set_extra_attribute(self, attribute_name: str, attribute_value: Any) -> None:
        """Set (or, with NULL, remove) an extra attribute."""
        name = self._extra_name(attribute_name)
        if attribute_value is None:
            self._extra.pop(name, None)
        else:
            self._extra[name] = AnyData.of(attribute_value)

    @staticmethod
    def _extra_name(attribute_name: Any) -> str:
        name = str(attribute_name).upper()
        if name not in EXTRA_ATTRIBUTES:
            raise ora(6502, f"invalid extra attribute name {attribute_name!r}")
        return name

    def execute(self, conflict_resolution: bool = True) -> None:
        """``EXECUTE``: apply this LCR now, from an apply handler, in the apply's transaction
        (``conflict_resolution``: use the update conflict handlers if it conflicts)."""
        executor = LCR_EXECUTOR.get()
        if executor is None:
            raise ora(26714, "LCR.EXECUTE is only possible in an apply handler")
        executor(self, bool(conflict_resolution))

    def _common(self) -> tuple:
        return (self._source_database_name, self._command_type, self._object_owner,
                self._object_name, self._tag, self._transaction_id, self._scn,
                self._commit_scn, self._source_time, self._extra)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _LCR) or other.oracle_type != self.oracle_type:
            return NotImplemented    # (a subclass — a captured LCR read lazily — is an LCR too)
        return self._state() == other._state()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, like Oracle's LCR objects


class RowLCR(_LCR):
    """``SYS.LCR$_ROW_RECORD``: one row change."""

    __slots__ = ("_old", "_new")

    oracle_type = "SYS.LCR$_ROW_RECORD"

    def __init__(self, source_database_name: str, command_type: str, object_owner: str,
                 object_name: str, tag: Any = None, transaction_id: str | None = None,
                 scn: Any = None, old_values: Any = None, new_values: Any = None, *,
                 commit_scn: Any = None, source_time: Any = None) -> None:
        self._init_common(source_database_name, command_type, object_owner, object_name, tag,
                          transaction_id, scn, commit_scn, source_time)
        self._old = _row_list(old_values)
        self._new = _row_list(new_values)

    @classmethod
    def construct(cls, source_database_name: str, command_type: str, object_owner: str,
                  object_name: str, tag: Any = None, transaction_id: str | None = None,
                  scn: Any = None, old_values: Any = None, new_values: Any = None, *,
                  commit_scn: Any = None, source_time: Any = None) -> "RowLCR":
        """``LCR$_ROW_RECORD.CONSTRUCT`` with Oracle's parameters, in Oracle's order.

        ``old_values`` / ``new_values``: ``{column: value}``, RowUnits or pairs;
        values may be Python values or AnyData.  ``commit_scn`` and
        ``source_time`` are Sluice additions (capture sets them in Oracle).
        """
        return cls(source_database_name, command_type, object_owner, object_name, tag,
                   transaction_id, scn, old_values, new_values, commit_scn=commit_scn,
                   source_time=source_time)

    def set_command_type(self, command_type: Any) -> None:
        super().set_command_type(command_type)
        if self._command_type not in ROW_COMMAND_TYPES:
            raise ora(6502, f"invalid command type {command_type!r} for a row LCR")

    # -- column values -------------------------------------------------------------
    def _units(self, value_type: str) -> dict[str, RowUnit]:
        return self._old if value_type == "OLD" else self._new

    def _unit(self, value_type: Any, column_name: Any, use_old: Any) -> RowUnit | None:
        vt, column = _value_type(value_type), _column(column_name)
        unit = self._units(vt).get(column)
        if (unit is None and vt == "NEW" and self._command_type == "UPDATE"
                and str(use_old or "Y").upper() == "Y"):
            unit = self._old.get(column)  # the update did not change this column
        return unit

    def get_value(self, value_type: str, column_name: str, use_old: str = "Y") -> AnyData | None:
        unit = self._unit(value_type, column_name, use_old)
        return None if unit is None else unit.data

    def plain_values(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
        """``(old, new)``: the columns of ``get_values('OLD', 'N')`` and ``get_values('NEW',
        'N')`` as (name, Python value) pairs — what the apply engine binds, without making
        AnyData of a stored LCR's values (:class:`~sluice.streams.capture.decode.DecodedRowLCR`)."""
        return ([(c, u.data.value) for c, u in self._old.items()],
                [(c, u.data.value) for c, u in self._new.items()])

    def get_values(self, value_type: str, use_old: str = "Y") -> list[RowUnit]:
        """``LCR$_ROW_LIST``; for NEW of an UPDATE with ``use_old='Y'`` unchanged
        columns come from the old values."""
        vt = _value_type(value_type)
        units = dict(self._units(vt))
        if vt == "NEW" and self._command_type == "UPDATE" and str(use_old or "Y").upper() == "Y":
            units = {**self._old, **units}
        return list(units.values())

    def set_value(self, value_type: str, column_name: str, column_value: Any) -> None:
        """Replace the value of an existing column (ORA-00904 when it is absent)."""
        units = self._units(_value_type(value_type))
        column = _column(column_name)
        if column not in units:
            raise ora(904, f'"{column}"')
        units[column].data = AnyData.of(column_value)

    def set_values(self, value_type: str, value_list: Any) -> None:
        vt = _value_type(value_type)
        if vt == "OLD":
            self._old = _row_list(value_list)
        else:
            self._new = _row_list(value_list)

    def add_column(self, value_type: str, column_name: str, column_value: Any) -> None:
        """Add a column (ORA-00957 when it is already there)."""
        units = self._units(_value_type(value_type))
        column = _column(column_name)
        if column in units:
            raise ora(957, column)
        units[column] = RowUnit(column, AnyData.of(column_value))

    def delete_column(self, column_name: str, value_type: str = "*") -> None:
        vt, column = _value_type(value_type, allow_both=True), _column(column_name)
        lists = [self._old, self._new] if vt == "*" else [self._units(vt)]
        if not any(column in units for units in lists):
            raise ora(904, f'"{column}"')
        for units in lists:
            units.pop(column, None)

    def rename_column(self, from_column_name: str, to_column_name: str, value_type: str = "*") -> None:
        vt = _value_type(value_type, allow_both=True)
        old, new = _column(from_column_name), _column(to_column_name)
        lists = [self._old, self._new] if vt == "*" else [self._units(vt)]
        if not any(old in units for units in lists):
            raise ora(904, f'"{old}"')
        if any(new in units for units in lists):
            raise ora(957, new)
        for units in lists:
            if old in units:  # rebuild to keep the column order
                items = [(new, replace(u, column_name=new)) if k == old else (k, u)
                         for k, u in units.items()]
                units.clear()
                units.update(items)

    def get_lob_information(self, value_type: str, column_name: str, use_old: str = "Y") -> int | None:
        unit = self._unit(value_type, column_name, use_old)
        return None if unit is None else unit.lob_information

    def get_long_information(self, value_type: str, column_name: str, use_old: str = "Y") -> int | None:
        unit = self._unit(value_type, column_name, use_old)
        return None if unit is None else unit.long_information

    def get_compatible(self) -> int:
        """COMPATIBLE_10_2 when the LCR carries extra attributes (added in 10.2),
        COMPATIBLE_10_1 when a column holds a 10.1 datatype (BINARY_FLOAT /
        BINARY_DOUBLE), else COMPATIBLE_9_2."""
        return row_compatible(bool(self._extra), (u.data.get_type_name() for units in (self._old, self._new)
                                                  for u in units.values()))

    def _state(self) -> tuple:
        return self._common() + (self._old, self._new)

    def __repr__(self) -> str:
        return (f"RowLCR({self._command_type} {self._object_owner}.{self._object_name} "
                f"from {self._source_database_name}, scn={self._scn!r})")


class DDLLCR(_LCR):
    """``SYS.LCR$_DDL_RECORD``: one DDL statement."""

    __slots__ = ("_object_type", "_ddl_text", "_logon_user", "_current_schema",
                 "_base_table_owner", "_base_table_name")

    oracle_type = "SYS.LCR$_DDL_RECORD"

    def __init__(self, source_database_name: str, command_type: str, object_owner: str | None,
                 object_name: str | None, object_type: str | None, ddl_text: str | None,
                 logon_user: str | None = None, current_schema: str | None = None,
                 base_table_owner: str | None = None, base_table_name: str | None = None,
                 tag: Any = None, transaction_id: str | None = None, scn: Any = None, *,
                 commit_scn: Any = None, source_time: Any = None) -> None:
        self._init_common(source_database_name, command_type, object_owner, object_name, tag,
                          transaction_id, scn, commit_scn, source_time)
        self.set_object_type(object_type)
        self._ddl_text = _text(ddl_text, "ddl_text")
        self._logon_user = _text(logon_user, "logon_user")
        self._current_schema = _text(current_schema, "current_schema")
        self._base_table_owner = _text(base_table_owner, "base_table_owner")
        self._base_table_name = _text(base_table_name, "base_table_name")

    @classmethod
    def construct(cls, source_database_name: str, command_type: str, object_owner: str | None,
                  object_name: str | None, object_type: str | None, ddl_text: str | None,
                  logon_user: str | None = None, current_schema: str | None = None,
                  base_table_owner: str | None = None, base_table_name: str | None = None,
                  tag: Any = None, transaction_id: str | None = None, scn: Any = None, *,
                  commit_scn: Any = None, source_time: Any = None) -> "DDLLCR":
        """``LCR$_DDL_RECORD.CONSTRUCT`` with Oracle's parameters, in Oracle's order."""
        return cls(source_database_name, command_type, object_owner, object_name, object_type,
                   ddl_text, logon_user, current_schema, base_table_owner, base_table_name, tag,
                   transaction_id, scn, commit_scn=commit_scn, source_time=source_time)

    @classmethod
    def _trusted_ddl(cls, common: tuple, object_type: Any, ddl_text: Any, logon_user: Any,
                     current_schema: Any, base_table_owner: Any, base_table_name: Any) -> "DDLLCR":
        """A DDL LCR as it was stored (``common``: :meth:`_trusted`'s arguments): nothing is
        checked, so one stored before the members' types were checked is still read."""
        lcr = cls._trusted(*common)
        lcr._object_type, lcr._ddl_text, lcr._logon_user = object_type, ddl_text, logon_user
        lcr._current_schema, lcr._base_table_owner = current_schema, base_table_owner
        lcr._base_table_name = base_table_name
        return lcr

    def get_object_type(self) -> str | None:
        return self._object_type

    def get_ddl_text(self) -> str | None:
        return self._ddl_text

    def get_logon_user(self) -> str | None:
        return self._logon_user

    def get_current_schema(self) -> str | None:
        return self._current_schema

    def get_base_table_owner(self) -> str | None:
        return self._base_table_owner

    def get_base_table_name(self) -> str | None:
        return self._base_table_name

    def set_object_type(self, object_type: str | None) -> None:
        text = _text(object_type, "object_type")
        self._object_type = None if text is None else text.upper()

    def set_ddl_text(self, ddl_text: str | None) -> None:
        self._ddl_text = _text(ddl_text, "ddl_text")

    def set_logon_user(self, logon_user: str | None) -> None:
        self._logon_user = _text(logon_user, "logon_user")

    def set_current_schema(self, current_schema: str | None) -> None:
        self._current_schema = _text(current_schema, "current_schema")

    def set_base_table_owner(self, base_table_owner: str | None) -> None:
        self._base_table_owner = _text(base_table_owner, "base_table_owner")

    def set_base_table_name(self, base_table_name: str | None) -> None:
        self._base_table_name = _text(base_table_name, "base_table_name")

    def get_compatible(self) -> int:
        """Always COMPATIBLE_9_2 (seed 000: "DDL LCRs always return DBMS_STREAMS.COMPATIBLE_9_2")."""
        return COMPATIBLE_9_2

    def _state(self) -> tuple:
        return self._common() + (self._object_type, self._ddl_text, self._logon_user,
                                 self._current_schema, self._base_table_owner,
                                 self._base_table_name)

    def __repr__(self) -> str:
        return (f"DDLLCR({self._command_type} {self._object_type} {self._object_owner}."
                f"{self._object_name} from {self._source_database_name}, scn={self._scn!r})")

