"""A fake connection that implements exactly the interpreter's hooks and records
every call, plus fake packages whose signatures follow Oracle's parameter order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sluice.errors import ora
from sluice.plsql import out_params, inout_params


@dataclass(frozen=True)
class Constructed:
    """What FakeConn.construct returns: the type name and the argument values."""
    type_name: str
    args: tuple


class EnqueueOptions:
    """Like DBMS_AQ.ENQUEUE_OPTIONS_T: mutable attributes with defaults."""

    def __init__(self) -> None:
        self.visibility = 2
        self.delivery_mode = 1
        self.transformation = None


class DequeueOptions:
    def __init__(self) -> None:
        self.wait = -1
        self.consumer_name = None
        self.navigation = 3


class MessageProperties:
    def __init__(self) -> None:
        self.priority = 1
        self.delay = 0
        self.expiration = -1
        self.correlation = None
        self.recipient_list = None


class _Package:
    def __init__(self, conn: "FakeConn", name: str) -> None:
        self._conn, self._name = conn, name

    def _record(self, proc: str, **kwargs: Any) -> None:
        self._conn.calls.append((self._name, proc, kwargs))


class StreamsAdm(_Package):
    @out_params("dml_rule_name", "ddl_rule_name")
    def add_global_rules(self, streams_type, streams_name=None, queue_name="streams_queue",
                         include_dml=True, include_ddl=False, include_tagged_lcr=False,
                         source_database=None, dml_rule_name=None, ddl_rule_name=None,
                         inclusion_rule=True, and_condition=None):
        kw = dict(locals()); kw.pop("self"); kw.pop("dml_rule_name"); kw.pop("ddl_rule_name")
        self._record("add_global_rules", **kw)
        return ("GLOBAL_DML1", "GLOBAL_DDL2")

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_schema_propagation_rules(self, schema_name, streams_name=None,
                                     source_queue_name=None, destination_queue_name=None,
                                     include_dml=True, include_ddl=False,
                                     include_tagged_lcr=False, source_database=None,
                                     dml_rule_name=None, ddl_rule_name=None,
                                     inclusion_rule=True, and_condition=None,
                                     queue_to_queue=None):
        kw = dict(locals()); kw.pop("self"); kw.pop("dml_rule_name"); kw.pop("ddl_rule_name")
        self._record("add_schema_propagation_rules", **kw)
        return ("HR1", "HR2")

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_table_rules(self, table_name, streams_type, streams_name=None,
                        queue_name="streams_queue", include_dml=True, include_ddl=False,
                        include_tagged_lcr=False, source_database=None, dml_rule_name=None,
                        ddl_rule_name=None, inclusion_rule=True, and_condition=None):
        kw = dict(locals()); kw.pop("self"); kw.pop("dml_rule_name"); kw.pop("ddl_rule_name")
        self._record("add_table_rules", **kw)
        return ("T_DML", "T_DDL")

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_schema_rules(self, schema_name, streams_type, streams_name=None,
                         queue_name="streams_queue", include_dml=True, include_ddl=False,
                         include_tagged_lcr=False, source_database=None, dml_rule_name=None,
                         ddl_rule_name=None, inclusion_rule=True, and_condition=None):
        kw = dict(locals()); kw.pop("self"); kw.pop("dml_rule_name"); kw.pop("ddl_rule_name")
        self._record("add_schema_rules", **kw)
        return ("S_DML", "S_DDL")

    @out_params("insert_rule_name", "update_rule_name", "delete_rule_name")
    def add_subset_rules(self, table_name, dml_condition, streams_type="apply",
                         streams_name=None, queue_name="streams_queue",
                         include_tagged_lcr=False, source_database=None):
        kw = dict(locals()); kw.pop("self")
        self._record("add_subset_rules", **kw)
        return ("INS", "UPD", "DEL")

    def add_message_rule(self, message_type, rule_condition, streams_type="apply",
                         streams_name=None, queue_name="streams_queue", inclusion_rule=True):
        kw = dict(locals()); kw.pop("self")
        self._record("add_message_rule", **kw)
        return "MSG_RULE1"


class RuleAdm(_Package):
    def create_evaluation_context(self, evaluation_context_name, table_aliases=None,
                                  variable_types=None, evaluation_function=None,
                                  evaluation_context_comment=None):
        kw = dict(locals()); kw.pop("self")
        self._record("create_evaluation_context", **kw)

    def create_rule(self, rule_name, condition, evaluation_context=None, action_context=None,
                    rule_comment=None):
        kw = dict(locals()); kw.pop("self")
        self._record("create_rule", **kw)

    def create_rule_set(self, rule_set_name, evaluation_context=None, rule_set_comment=None):
        kw = dict(locals()); kw.pop("self")
        self._record("create_rule_set", **kw)

    def add_rule(self, rule_name, rule_set_name, evaluation_context=None, rule_comment=None):
        kw = dict(locals()); kw.pop("self")
        self._record("add_rule", **kw)


class AqAdm(_Package):
    INFINITE = -1

    def create_queue_table(self, queue_table, queue_payload_type, storage_clause=None,
                           sort_list=None, multiple_consumers=False, message_grouping=0,
                           comment=None):
        kw = dict(locals()); kw.pop("self")
        self._record("create_queue_table", **kw)

    def create_queue(self, queue_name, queue_table, queue_type=0, max_retries=None,
                     retry_delay=0, retention_time=0, dependency_tracking=False, comment=None):
        kw = dict(locals()); kw.pop("self")
        self._record("create_queue", **kw)

    def start_queue(self, queue_name, enqueue=True, dequeue=True):
        kw = dict(locals()); kw.pop("self")
        self._record("start_queue", **kw)

    def stop_queue(self, queue_name, enqueue=True, dequeue=True, wait=True):
        kw = dict(locals()); kw.pop("self")
        self._record("stop_queue", **kw)
        raise ora(24010, queue_name)


class Aq(_Package):
    IMMEDIATE = 1
    ON_COMMIT = 2
    NO_WAIT = 0
    FOREVER = -1
    BUFFERED = 2
    PERSISTENT = 1

    @out_params("msgid")
    def enqueue(self, queue_name, enqueue_options, message_properties, payload):
        kw = dict(locals()); kw.pop("self")
        self._record("enqueue", **kw)
        return b"\x01" * 16

    @out_params("message_properties", "payload", "msgid")
    def dequeue(self, queue_name, dequeue_options):
        kw = dict(locals()); kw.pop("self")
        self._record("dequeue", **kw)
        return MessageProperties(), "hello", b"\x02" * 16

    @inout_params("counter")
    def bump(self, counter, step=1):
        self._record("bump", counter=counter, step=step)
        return counter + step

    def next_id(self):
        return 42


class Streams(_Package):
    def compatible_9_2(self):
        return 90200

    def compatible_10_1(self):
        return 100100


@dataclass
class FakeConn:
    calls: list = field(default_factory=list)
    constructed: list = field(default_factory=list)
    declared: list = field(default_factory=list)
    types: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    queries: list = field(default_factory=list)
    sql: list = field(default_factory=list)
    tx: list = field(default_factory=list)
    connects: list = field(default_factory=list)
    known_types: tuple = ("SYS.AQ$_AGENT", "SYS.RE$VARIABLE_TYPE", "SYS.RE$VARIABLE_TYPE_LIST",
                          "SYS.AQ$_RECIPIENT_LIST_T", "MY_TYPE", "STRMADMIN.REGION_PRI_MSG")

    _PACKAGES = {"DBMS_STREAMS_ADM": StreamsAdm, "DBMS_RULE_ADM": RuleAdm,
                 "DBMS_AQADM": AqAdm, "DBMS_AQ": Aq, "DBMS_STREAMS": Streams}

    def package(self, name: str):
        cls = self._PACKAGES.get(name)
        if cls is None:
            raise ora(4043, name)
        return cls(self, name)

    def construct(self, type_name: str, args: list):
        if type_name not in self.known_types:
            raise ora(4043, type_name)
        self.constructed.append((type_name, list(args)))
        if type_name == "SYS.AQ$_AGENT" and len(args) != 3:
            raise TypeError("AQ$_AGENT takes 3 arguments")
        return Constructed(type_name, tuple(args))

    def declare(self, type_name: str):
        self.declared.append(type_name)
        if type_name == "DBMS_AQ.ENQUEUE_OPTIONS_T":
            return EnqueueOptions()
        if type_name == "DBMS_AQ.DEQUEUE_OPTIONS_T":
            return DequeueOptions()
        if type_name == "DBMS_AQ.MESSAGE_PROPERTIES_T":
            return MessageProperties()
        if type_name == "NO_SUCH_TYPE":
            raise ora(4043, type_name)
        return None

    def create_type(self, name, kind, attributes, element_type, max_size, or_replace):
        self.types.append((name, kind, attributes, element_type, max_size, or_replace))

    def drop_type(self, name, force):
        self.dropped.append((name, force))

    def query(self, sql, binds):
        self.queries.append((sql, binds))
        return ["A", "B"], [(1, "x"), (2, "y")]

    def commit(self):
        self.tx.append("commit")

    def rollback(self):
        self.tx.append("rollback")

    def sqlplus_connect(self, user, password, as_sysdba=False):
        self.connects.append((user, password) if not as_sysdba else (user, password, "SYSDBA"))


class SqlConn(FakeConn):
    """A FakeConn that also takes other SQL through the optional hook."""

    def execute_sql_statement(self, kind_words, text):
        self.sql.append((kind_words, text))
        return 3 if kind_words == "INSERT" else None
