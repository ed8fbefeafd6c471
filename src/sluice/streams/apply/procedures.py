"""DBMS_APPLY_ADM's per-table and error-queue procedures.

:class:`ApplyProcedures` holds the procedures of DBMS_APPLY_ADM that do not create or alter
an apply process: SET_KEY_COLUMNS, SET_TABLE_INSTANTIATION_SCN,
SET_SCHEMA_INSTANTIATION_SCN, SET_UPDATE_CONFLICT_HANDLER, SET_DML_HANDLER,
SET_ENQUEUE_DESTINATION, SET_EXECUTE, EXECUTE_ERROR, EXECUTE_ALL_ERRORS, DELETE_ERROR and
DELETE_ALL_ERRORS.  The package class of DBMS_APPLY_ADM (``conn.apply_adm``) inherits them.
Like every DBMS_*_ADM procedure they change catalog state only (DDL: they commit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import InterfaceError, ora
from ...names import canonical, name_list, split_qualified
from ..capture.context import CaptureContext
from . import definition, errorqueue, settings as st
from .targetdsn import check_link

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["ApplyProcedures"]


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.upper() in ("TRUE", "FALSE", "Y", "N", "YES", "NO"):
        return value.upper() in ("TRUE", "Y", "YES")
    raise InterfaceError(f"{name} must be a BOOLEAN")


def _columns(column_list: Any, what: str) -> list[str]:
    """A comma-delimited list (Oracle's VARCHAR2 form) or a sequence of column names."""
    cols = [canonical(c, what) for c in name_list(column_list, "column_list")]
    if len(set(cols)) != len(cols):
        raise ora(957, next(c for c in cols if cols.count(c) > 1))
    return cols


# the most apply servers one apply process starts (parallelism 10**6 forked processes until
# the target refused connections)
MAX_PARALLELISM = 64


def _valid_parameter(param: str, text: str) -> bool:
    if param == "DISABLE_ON_ERROR":
        return text in ("Y", "N")
    if param == "COMMIT_SERIALIZATION":
        return text in ("FULL", "NONE", "DEPENDENT_TRANSACTIONS")
    if param in ("MAXIMUM_SCN", "TXN_LCR_SPILL_THRESHOLD") and text == "INFINITE":
        return True
    # ASCII digits: str.isdigit() takes '²' and other digits int() refuses (the apply
    # process then failed at every start)
    digits = text.isascii() and text.isdigit()
    if param == "MAXIMUM_SCN":
        return text == "INFINITE" or digits
    if param == "PARALLELISM":    # each apply server is a process with a target connection
        return digits and 1 <= int(text) <= MAX_PARALLELISM
    return digits and int(text) >= 1       # TXN_LCR_SPILL_THRESHOLD, GROUPTRANSOPS


def _link(apply_database_link: str | None) -> str | None:
    return check_link(apply_database_link) if apply_database_link else None


class ApplyProcedures:
    """DBMS_APPLY_ADM's per-table and error procedures for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn

    def _ctx(self) -> CaptureContext:
        ctx = CaptureContext(self._conn)
        ctx.check_streams_administrator()
        return ctx

    def _object(self, object_name: str) -> tuple[str, str]:
        return split_qualified(object_name, self._conn.username, "object name")

    # -- running ---------------------------------------------------------------------------
    def start_apply(self, apply_name: str) -> None:
        """Enable the apply process (a host runs it within a second); an ABORTED one starts
        again, its error cleared."""
        self._status(apply_name, "ENABLED")

    def stop_apply(self, apply_name: str, force: bool = False) -> None:
        """Disable it: its host lets it finish the transaction under way and stops it."""
        self._status(apply_name, "DISABLED")

    def _status(self, apply_name: str, status: str) -> None:
        definition.set_status(self._ctx(), canonical(apply_name, "apply name"), status)

    def set_parameter(self, apply_name: str, parameter: str, value: Any) -> None:
        """disable_on_error (Y/N), commit_serialization (FULL/NONE), parallelism (1 .. 64),
        txn_lcr_spill_threshold, maximum_scn, and Sluice's grouptransops (row LCRs of several
        whole source transactions one target transaction may hold; 1, the default: none
        grouped); NULL value: back to the default.
        :raises: ORA-26667 unknown parameter, ORA-23605 bad value, ORA-26701 no apply."""
        ctx = self._ctx()
        name = canonical(apply_name, "apply name")
        if definition.find_spec(ctx, name) is None:
            raise ora(26701, name)
        param = str(parameter).upper()
        if param not in definition.PARAMETERS:
            raise ora(26667, parameter)
        text = None if value is None else str(value).upper()
        if text is not None and not _valid_parameter(param, text):
            raise ora(23605, value, param)
        ctx.ddl_commit()
        key = f"{name}|{param}"
        if text is None:
            ctx.drop_object(definition.PARAMETER_KIND, definition.OWNER, key)
        else:
            st.put(ctx, definition.PARAMETER_KIND, definition.OWNER, key, {"value": text})

    # -- keys ---------------------------------------------------------------------------
    def set_key_columns(self, object_name: str, column_list: Any = None,
                        apply_database_link: str | None = None) -> None:
        """Substitute key columns for the table at the destination (NULL or empty: remove
        them, the primary key is used again)."""
        ctx = self._ctx()
        owner, name = self._object(object_name)
        cols = _columns(column_list, "column name")
        ctx.ddl_commit()
        link = _link(apply_database_link)
        st.drop_where(ctx, st.KEY_COLUMN, owner, lambda n, s: s["object_name"] == name
                      and (s.get("apply_database_link") or None) == link)
        for i, c in enumerate(cols):
            st.put(ctx, st.KEY_COLUMN, owner, f"{name}|{c}|{link or ''}", {
                "object_name": name, "column_name": c, "position": i + 1, "apply_database_link": link})

    # -- instantiation SCNs ---------------------------------------------------------------
    def set_table_instantiation_scn(self, source_object_name: str, source_database_name: str,
                                    instantiation_scn: int | None, apply_database_link: str | None = None,
                                    recursive: bool = False) -> None:
        """LCRs for the table with a commit SCN at or below ``instantiation_scn`` are not
        applied; NULL removes it."""
        ctx = self._ctx()
        owner, name = self._object(source_object_name)
        self._instantiate(ctx, source_database_name, owner, name, instantiation_scn, apply_database_link)

    def set_schema_instantiation_scn(self, source_schema_name: str, source_database_name: str,
                                     instantiation_scn: int | None, apply_database_link: str | None = None,
                                     recursive: bool = False) -> None:
        """The same for every table of the schema that has no table instantiation SCN."""
        ctx = self._ctx()
        owner = canonical(source_schema_name, "schema name")
        self._instantiate(ctx, source_database_name, owner, None, instantiation_scn, apply_database_link)

    def _instantiate(self, ctx: CaptureContext, source_db: str, owner: str, name: str | None,
                     scn: int | None, link: str | None) -> None:
        if not source_db:
            raise ora(6502, "source_database_name must be given")
        if scn is not None and (isinstance(scn, bool) or not isinstance(scn, int) or scn < 0):
            raise ora(6502, f"instantiation_scn must be a non-negative number, not {scn!r}")
        db, link = str(source_db).upper(), _link(link)
        key = f"{owner}.{name}" if name else owner
        key += f"@{link}" if link else ""
        ctx.ddl_commit()
        if scn is None:
            ctx.drop_object(st.INSTANTIATION, db, key)
            return
        st.put(ctx, st.INSTANTIATION, db, key, {
            "source_object_owner": owner, "source_object_name": name,
            "object_type": "TABLE" if name else "SCHEMA", "instantiation_scn": scn,
            "apply_database_link": link})

    # -- conflicts ------------------------------------------------------------------------
    def set_update_conflict_handler(self, object_name: str, method_name: str | None,
                                    resolution_column: str | None, column_list: Any,
                                    apply_database_link: str | None = None) -> None:
        """Add, change (same resolution column) or, with ``method_name`` NULL, remove an
        update conflict handler: OVERWRITE, DISCARD, MAXIMUM or MINIMUM."""
        ctx = self._ctx()
        owner, name = self._object(object_name)
        cols = _columns(column_list, "column name")
        link = _link(apply_database_link)
        res = canonical(resolution_column, "resolution column") if resolution_column else None
        if method_name is not None:
            method = str(method_name).upper()
            if method not in st.METHODS:
                raise ora(26693, f"method {method_name!r} (OVERWRITE, DISCARD, MAXIMUM or MINIMUM)")
            if not cols:
                raise ora(26693, "the column list is empty")
            if res is None:
                res = cols[0] if method in ("OVERWRITE", "DISCARD") else None
                if res is None:
                    raise ora(26693, f"{method} needs a resolution column")
            if res not in cols:
                raise ora(26693, f"resolution column {res} is not in the column list")
        same_table = [(n, s) for o, n, s in ctx.objects(st.CONFLICT_COLUMN)
                      if o == owner and s["object_name"] == name and (s.get("apply_database_link") or None) == link]
        if method_name is not None:
            taken = [s["column_name"] for _, s in same_table
                     if s["column_name"] in cols and s["resolution_column"] != res]
            if taken:
                raise ora(26693, f"column {taken[0]} is in another column list")
        ctx.ddl_commit()
        for n, s in same_table:
            if s["resolution_column"] == res or (method_name is None and s["column_name"] in cols):
                ctx.drop_object(st.CONFLICT_COLUMN, owner, n)
        if method_name is None:
            return
        for c in cols:
            st.put(ctx, st.CONFLICT_COLUMN, owner, f"{name}|{c}|{link or ''}", {
                "object_name": name, "method_name": method, "resolution_column": res,
                "column_name": c, "apply_database_link": link})

    # -- handlers ---------------------------------------------------------------------------
    def set_dml_handler(self, object_name: str, object_type: str = "TABLE", operation_name: str = "DEFAULT",
                        error_handler: Any = False, user_procedure: str | None = None,
                        apply_database_link: str | None = None, apply_name: str | None = None) -> None:
        """Set (or, with ``user_procedure`` NULL, remove) the procedure applying the table's
        row LCRs of one operation ('DEFAULT': every operation without its own); an error
        handler is called only when applying the LCR fails.  The procedure is a name
        registered with :func:`sluice.register_function`."""
        ctx = self._ctx()
        owner, name = self._object(object_name)
        if str(object_type).upper() != "TABLE":
            raise ora(6502, f"object_type must be TABLE, not {object_type!r}")
        op = str(operation_name).upper()
        if op not in st.OPERATIONS:
            raise ora(6502, f"operation_name must be one of {', '.join(st.OPERATIONS)}")
        error = _flag("error_handler", error_handler)
        apply = canonical(apply_name, "apply name") if apply_name else None
        link = _link(apply_database_link)
        key = f"{name}|{op}|{'E' if error else 'D'}|{apply or ''}|{link or ''}"
        if user_procedure is not None and not isinstance(user_procedure, str):
            raise ora(6502, f"user_procedure must be a procedure's name, not {type(user_procedure).__name__}")
        ctx.ddl_commit()
        if user_procedure is None:
            ctx.drop_object(st.DML_HANDLER, owner, key)
            return
        st.put(ctx, st.DML_HANDLER, owner, key, {
            "object_name": name, "object_type": "TABLE", "operation_name": op, "error_handler": error,
            "user_procedure": user_procedure, "apply_database_link": link, "apply_name": apply})

    # -- action contexts ----------------------------------------------------------------------
    def set_enqueue_destination(self, rule_name: str, destination_queue_name: str | None) -> None:
        """Messages that satisfy the rule are enqueued into the queue by the apply process
        (the APPLY$_ENQUEUE pair of the rule's action context; NULL removes it)."""
        self._action_pair(rule_name, "APPLY$_ENQUEUE", None if destination_queue_name is None else
                          ".".join(f'"{p}"' for p in split_qualified(destination_queue_name,
                                                                     self._conn.username, "queue name")))

    def set_execute(self, rule_name: str, execute: Any) -> None:
        """FALSE: the apply process does not execute messages that satisfy the rule
        (APPLY$_EXECUTE = 'NO' in its action context); TRUE removes the directive."""
        self._action_pair(rule_name, "APPLY$_EXECUTE", None if _flag("execute", execute) else "NO")

    def _action_pair(self, rule_name: str, pair: str, value: str | None) -> None:
        self._ctx()
        from ...rules.engine.ruleset import rules_catalog
        from ...rules.engine.types import NVList
        rule = rules_catalog(self._conn.context.store).rule(
            ".".join(split_qualified(rule_name, self._conn.username, "rule name")))
        actx = NVList(dict(rule.action_context.items()) if rule.action_context else None)
        if actx.get_value(pair) is not None:
            actx.remove_pair(pair)
        if value is not None:
            actx.add_pair(pair, value)
        adm = self._conn.rule_adm
        if len(actx):
            adm.alter_rule(rule_name=rule_name, action_context=actx)
        else:
            adm.alter_rule(rule_name=rule_name, remove_action_context=True)

    # -- the error queue --------------------------------------------------------------------
    def execute_error(self, local_transaction_id: str, execute_as_user: bool = False,
                      user_procedure: str | None = None) -> None:
        """Apply the error transaction again (after the cause is fixed); it leaves the error
        queue when it succeeds, and stays there with the new error when it does not.  Its
        handlers and ``user_procedure`` run with the apply user's rights, or with
        ``execute_as_user`` the caller's (DBMS_APPLY_ADM's "security context of the current
        user"); a ``user_procedure`` that user may not execute: ORA-06550, nothing changed."""
        errorqueue.execute_error(self._conn, self._ctx(), local_transaction_id, user_procedure,
                                 bool(execute_as_user))

    def execute_all_errors(self, apply_name: str | None = None, execute_as_user: bool = False) -> None:
        ctx = self._ctx()
        for txn_id in errorqueue.error_ids(ctx, canonical(apply_name, "apply name") if apply_name else None):
            errorqueue.execute_error(self._conn, ctx, txn_id, None, bool(execute_as_user))

    def delete_error(self, local_transaction_id: str) -> None:
        ctx = self._ctx()
        if not errorqueue.delete(self._conn, ctx, [local_transaction_id]):
            raise ora(26673, f"no error transaction {local_transaction_id}")

    def delete_all_errors(self, apply_name: str | None = None) -> None:
        ctx = self._ctx()
        errorqueue.delete(self._conn, ctx, errorqueue.error_ids(ctx, canonical(apply_name, "apply name")
                                                    if apply_name else None))
