"""DDL of the catalog, the queue tables and their views, for every SQL backend.

A queue table is a real table named like Oracle's (``"OWNER.NAME"``: in SQLite,
where schemas do not exist, and in the store's own PostgreSQL schema alike) so
the "message warehouse" is plain SQL: ``SELECT * FROM "SCOTT.AQ$ORDERS_QT"`` —
or, through the statement interpreter, ``SELECT * FROM AQ$ORDERS_QT``.  The
statements are written once; a :class:`~.dialect.Dialect` fills in the types and
functions that differ.
"""

from __future__ import annotations

import hashlib

from .base import RECORD_COLUMNS, SHARDED_KIND, QueueTableInfo
from ..constants import MSG_EXPIRED, STATE_UNDELIVERABLE
from .dialect import Dialect
from .stats import STATS_TABLE

# 1: the first release; 2: multi-consumer records (ADDRESS, PROTOCOL, RECIPIENT_LIST
# columns, MSGID no longer unique, the consumer in the order index of multi-consumer tables);
# 3: Streams capture (SLUICE_CAPTURE_PROGRESS, SLUICE_STREAMS_UNSUPPORTED and their views)
# 4: the process host (SLUICE_STREAMS_HOSTED, V$STREAMS_HOSTED)
# 5: Streams propagation (SLUICE_QUEUE_SCHEDULES, SLUICE_PROPAGATION_RECEIVED and their views)
# 6: Streams apply (SLUICE_APPLY_ERROR, SLUICE_APPLY_PROGRESS and the DBA_APPLY_* views)
# 7: Spark pipelines (SLUICE_PIPELINE_PROGRESS, DBA_STREAMS_TRANSFORMATIONS)
# 8: buffered staging of captured LCRs (SLUICE_CAPTURE_CONSUMED)
# 9: monitoring (SLUICE_QUEUE_DEPTH over every queue table, V$AQ and the views on it)
# 10: what a propagation let go and has not yet told its destination (SLUICE_PROPAGATION_UNTOLD);
#     the apply's spilled transactions (SLUICE_APPLY_SPILL)
# 11: what a Spark apply sink enqueued for SET_ENQUEUE_DESTINATION (SLUICE_PIPELINE_ENQUEUED)
# 12: a propagation destination's de-duplication rows are one per batch and destination queue
#     (SLUICE_PROPAGATION_INDOUBT) instead of one per message (SLUICE_PROPAGATION_RECEIVED,
#     whose rows an upgrade moves there: see legacy_received_ddl)
# 13: DBA_APPLY.ERROR_NUMBER a number on PostgreSQL too (it was the catalog's JSON text; a
#     view's column type cannot be replaced: the upgrade drops DBA_APPLY and what reads it,
#     RETYPED_VIEWS, and creates them again)
# 14: multi-consumer queue tables' $EXPIRED index (MSGID of the records out of retries: see
#     expired_index_ddl)
# 15: what DELETE_ERROR deleted (SLUICE_APPLY_ERROR_DELETED: a replayed Spark micro-batch
#     must skip a transaction the user deleted from the error queue)
# 16: the AQ$<queue_table> views show MSG_STATE UNDELIVERABLE (STATE_UNDELIVERABLE: a queue-to-
#     dblink propagation's refused recipient); an upgrade makes every AQ$ view again
# 17: sharded queues / Transactional Event Queues: DBA_QUEUES.SHARDED is 'TRUE' / 'FALSE' (it
#     was 'NO'), read from the SHARDED_QUEUE rows of SLUICE_CATALOG (no table changes; SQLite's
#     CREATE VIEW IF NOT EXISTS keeps an old view: the upgrade drops RESHAPED_VIEWS first);
#     USER_QUEUES gains SHARDED and QUEUE_CATEGORY. DBA_SUBSCR_REGISTRATIONS' QOSFLAGS, TIMEOUT
#     and NTFN_GROUPING_* are numbers on PostgreSQL too (they were the catalog's JSON text:
#     RETYPED_VIEWS)
# 18: DBA_TAB_PRIVS shows SELECT on tables (TABPRIV rows: the tables of evaluation contexts'
#     table aliases), RESHAPED_VIEWS; roles: DBA_ROLES, DBA_ROLE_PRIVS, USER_ROLE_PRIVS;
#     DBA_EVALUATION_CONTEXT_TABLES (and ALL_, USER_)
# 19: SESSION_ROLES, ROLE_SYS_PRIVS, ROLE_TAB_PRIVS, ROLE_ROLE_PRIVS, QUEUE_PRIVILEGES (per-session views:
#     PostgreSQL's are made by catalog_ddl, SQLite's per connection)
# 20: DBA_SYS_PRIVS and DBA_TAB_PRIVS (so ROLE_SYS_PRIVS, ROLE_TAB_PRIVS) list what the predefined
#     roles give (ROLE_GRANTS: constant rows, no catalog rows), RESHAPED_VIEWS; ALL_TAB_PRIVS (per
#     session, as USER_VIEWS are), which QUEUE_PRIVILEGES now reads
# 21: DBA_CAPTURE.APPLIED_SCN with PERSISTENT staging is what the apply processes of the
#     capture's queue applied (SLUICE_APPLY_PROGRESS; it was NULL), RESHAPED_VIEWS
# 22: roles granted to PUBLIC are every user's (SESSION_ROLES, USER_ROLE_PRIVS show them);
#     SESSION_ROLES shows what SET ROLE enabled (PostgreSQL: the session settings
#     sluice.role_mode / sluice.set_roles; SQLite makes the view again per SET ROLE)
# 23: TRANSACTIONAL queue tables' $GROUP index (a message group in dequeue order: see
#     group_index_ddl)
# 24: the views show their dates in the session's time zone (they were UTC): SQLite's by
#     sluice_zone_shift / sluice_view_date, PostgreSQL's AT TIME ZONE the sluice.time_zone
#     setting (sessionzone; SQLite's catalog views of UTC dates are made again: UTC_VIEWS_MARK)
# 25: a capture process's spilled large transaction (SLUICE_CAPTURE_SPILL; no other change:
#     CREATE TABLE IF NOT EXISTS)
# 26: PostgreSQL's ORACLE_SUBSTR, ORACLE_INSTR, ORACLE_TO_CHAR, ORACLE_TO_DATE (PG_FUNCTIONS: Oracle's
#     functions in a user's SQL, store/oraclecalls.py)
# 27: store-wide enqueue/dequeue totals (SLUICE_QUEUE_STATS, V$PERSISTENT_QUEUES: see
#     stats.py); V$AQ counts a multi-consumer message once, not once per recipient
#     (SLUICE_QUEUE_DEPTH gains MESSAGES and MSG_SUM_ENQ_TIME), RESHAPED_VIEWS; V$BUFFERED_QUEUES
#     likewise, with Oracle's STARTUP_TIME, CNUM_MSGS, CSPILL_MSGS (RETYPED_VIEWS too: new
#     columns between old ones)
# 28: V$BUFFERED_SUBSCRIBERS gains Oracle's cumulative STARTUP_TIME, CNUM_MSGS, TOTAL_DEQUEUED_MSG
#     and LAST_DEQUEUE_TIME, between old columns (RETYPED_VIEWS, RESHAPED_VIEWS); no table changes
# 29: PostgreSQL's AQ$<queue_table> views read the session's zone once a statement
#     (SLUICE_SESSION_ZONE(), PG_ZONE_FUNCTION; the same answers): every AQ$ view made again
# 30: V$BUFFERED_SUBSCRIBERS gains Oracle's LAST_BROWSED_SEQ/_NUM, LAST_DEQUEUED_SEQ/_NUM,
#     CURRENT_ENQ_SEQ, MESSAGE_LAG, ELAPSED_DEQUEUE_TIME, DEQUEUE_CPU_TIME, AVG_MSG_AGE and
#     OLDEST_MSGID, between old columns (RETYPED_VIEWS, RESHAPED_VIEWS); no table changes
SCHEMA_VERSION = 30
# views whose column types changed since an older schema version: dropped (with the views
# built on them, all in catalog_ddl) before catalog_ddl creates them again
RETYPED_VIEWS = ("DBA_APPLY", "DBA_SUBSCR_REGISTRATIONS", "V$BUFFERED_QUEUES", "V$BUFFERED_SUBSCRIBERS")
# an SQLite view of dates has the first, and before schema version 24 (UTC dates) not the second
UTC_VIEWS_MARK = ("'unixepoch'", "sluice_zone_shift")
# views whose text changed (same columns and types) since an older schema version
RESHAPED_VIEWS = ("DBA_QUEUES", "DBA_TAB_PRIVS", "DBA_SYS_PRIVS", "DBA_CAPTURE", "V$AQ",
                  "SLUICE_QUEUE_DEPTH", "V$BUFFERED_QUEUES", "V$BUFFERED_SUBSCRIBERS")

# whether the queue table row ``{t}`` is a sharded queue's ('TRUE' / 'FALSE', as Oracle's
# DBA_QUEUES.SHARDED)
SHARDED_SQL = (f"CASE WHEN EXISTS (SELECT 1 FROM SLUICE_CATALOG SQ WHERE SQ.KIND = '{SHARDED_KIND}' "
               "AND SQ.OWNER = {t}.OWNER AND SQ.NAME = {t}.NAME) THEN 'TRUE' ELSE 'FALSE' END")


def _json_int(d: Dialect, key: str) -> str:
    """The catalog's JSON number ``key`` as an integer column (PostgreSQL's ``->>`` is text)."""
    return f"CAST({d.json_text('SPEC', key)} AS {d.int_type})"


def catalog_ddl(d: Dialect) -> list[str]:
    """Idempotent statements creating (or completing) the catalog of a store."""
    i, r = d.int_type, d.real_type
    stmts = [
        """CREATE TABLE IF NOT EXISTS SLUICE_META (
            KEY TEXT PRIMARY KEY, VALUE TEXT)""",
        f"""CREATE TABLE IF NOT EXISTS AQ_QUEUE_TABLES (
            QT_ID {d.serial_key}, OWNER TEXT NOT NULL, NAME TEXT NOT NULL,
            PAYLOAD_TYPE TEXT NOT NULL, SORT_LIST TEXT NOT NULL, MULTIPLE_CONSUMERS {i} NOT NULL,
            MESSAGE_GROUPING TEXT NOT NULL, USER_COMMENT TEXT, COMPATIBLE TEXT, SECURE {i} NOT NULL,
            PRIMARY_INSTANCE {i}, SECONDARY_INSTANCE {i}, CREATED {r},
            UNIQUE (OWNER, NAME))""",
        f"""CREATE TABLE IF NOT EXISTS AQ_QUEUES (
            QID {d.serial_key}, OWNER TEXT NOT NULL, NAME TEXT NOT NULL,
            QT_ID {i} NOT NULL REFERENCES AQ_QUEUE_TABLES (QT_ID), QUEUE_TYPE TEXT NOT NULL,
            MAX_RETRIES {i} NOT NULL, RETRY_DELAY {r} NOT NULL, RETENTION_TIME {r} NOT NULL,
            ENQUEUE_ENABLED {i} NOT NULL, DEQUEUE_ENABLED {i} NOT NULL, USER_COMMENT TEXT,
            CREATED {r}, UNIQUE (OWNER, NAME))""",
        """CREATE TABLE IF NOT EXISTS SLUICE_CATALOG (
            KIND TEXT NOT NULL, OWNER TEXT NOT NULL, NAME TEXT NOT NULL, SPEC TEXT NOT NULL,
            PRIMARY KEY (KIND, OWNER, NAME))""",
        f"""CREATE TABLE IF NOT EXISTS SLUICE_SCN (ID {i} PRIMARY KEY, SCN {i} NOT NULL)""",
        # notifications owed to registrations (DBMS_AQ.REGISTER / conn.subscribe): written in
        # the enqueuing transaction, delivered and deleted by a notification dispatcher; a
        # claim is a lease, so a dispatcher that dies leaves them to another one
        f"""CREATE TABLE IF NOT EXISTS SLUICE_NOTIFICATIONS (
            ID {d.serial_key}, REG_ID TEXT NOT NULL, MSGID {d.blob_type} NOT NULL,
            QUEUE TEXT NOT NULL, CONSUMER_NAME TEXT, DELIVERY_MODE {i} NOT NULL,
            PAYLOAD {d.blob_type}, CREATED {r} NOT NULL, CLAIMED_UNTIL {r}, ATTEMPTS {i} NOT NULL DEFAULT 0)""",
        """CREATE INDEX IF NOT EXISTS SLUICE_NOTIFICATIONS$REG ON SLUICE_NOTIFICATIONS (REG_ID, ID)""",
        # enqueue / dequeue totals, a row per queue and writer (stats.py), summed by
        # V$PERSISTENT_QUEUES
        f"""CREATE TABLE IF NOT EXISTS {STATS_TABLE} (
            QID {i} NOT NULL, SID {i} NOT NULL, ENQUEUED_MSGS {i} NOT NULL DEFAULT 0,
            DEQUEUED_MSGS {i} NOT NULL DEFAULT 0, FIRST_ACTIVITY_TIME {r}, LAST_ENQUEUE_TIME {r},
            LAST_DEQUEUE_TIME {r}, PRIMARY KEY (QID, SID))""",
        """INSERT INTO SLUICE_SCN (ID, SCN) VALUES (1, 0) ON CONFLICT DO NOTHING""",
        """INSERT INTO SLUICE_META (KEY, VALUE) VALUES ('catalog_version', '0') ON CONFLICT DO NOTHING""",
        f"""INSERT INTO SLUICE_META (KEY, VALUE) VALUES ('schema_version', '{SCHEMA_VERSION}')
            ON CONFLICT DO NOTHING""",
        f"""{d.create_view} DUAL AS SELECT 'X' AS DUMMY""",
        # empty until the store lists its queue tables in it (queue_depth_ddl)
        f"""{d.create_view} {QUEUE_DEPTH_VIEW} AS {_queue_depth_select(None, d)}""",
        f"""{d.create_view} DBA_QUEUE_TABLES AS
            SELECT OWNER, NAME AS QUEUE_TABLE,
                   CASE WHEN PAYLOAD_TYPE IN ('RAW', 'XMLTYPE', 'JSON') THEN PAYLOAD_TYPE ELSE 'OBJECT' END AS TYPE,
                   PAYLOAD_TYPE AS OBJECT_TYPE, SORT_LIST AS SORT_ORDER,
                   CASE WHEN MULTIPLE_CONSUMERS = 1 THEN 'MULTIPLE' ELSE 'SINGLE' END AS RECIPIENTS,
                   MESSAGE_GROUPING, COMPATIBLE, PRIMARY_INSTANCE, SECONDARY_INSTANCE,
                   1 AS OWNER_INSTANCE, USER_COMMENT,
                   CASE WHEN SECURE = 1 THEN 'YES' ELSE 'NO' END AS SECURE
            FROM AQ_QUEUE_TABLES""",
        f"""{d.create_view} DBA_QUEUES AS
            SELECT Q.OWNER, Q.NAME, T.NAME AS QUEUE_TABLE, Q.QID, Q.QUEUE_TYPE, Q.MAX_RETRIES,
                   Q.RETRY_DELAY,
                   CASE WHEN Q.ENQUEUE_ENABLED = 1 THEN 'YES' ELSE 'NO' END AS ENQUEUE_ENABLED,
                   CASE WHEN Q.DEQUEUE_ENABLED = 1 THEN 'YES' ELSE 'NO' END AS DEQUEUE_ENABLED,
                   CASE WHEN Q.RETENTION_TIME < 0 THEN 'FOREVER'
                        ELSE CAST(CAST(Q.RETENTION_TIME AS {i}) AS TEXT) END AS RETENTION,
                   Q.USER_COMMENT, CAST(NULL AS TEXT) AS NETWORK_NAME, {SHARDED_SQL.format(t='T')} AS SHARDED,
                   'PERSISTENT' AS QUEUE_CATEGORY, T.MULTIPLE_CONSUMERS AS RECIPIENTS_MULTIPLE
            FROM AQ_QUEUES Q JOIN AQ_QUEUE_TABLES T ON T.QT_ID = Q.QT_ID""",
        f"""{d.create_view} ALL_QUEUES AS SELECT * FROM DBA_QUEUES""",
        f"""{d.create_view} ALL_QUEUE_TABLES AS SELECT * FROM DBA_QUEUE_TABLES""",
        f"""{d.create_view} DBA_TRANSFORMATIONS AS
            SELECT OWNER, NAME, CAST(NULL AS {i}) AS TRANSFORMATION_ID,
                   {d.json_text('SPEC', 'from_type')} AS FROM_TYPE,
                   {d.json_text('SPEC', 'to_type')} AS TO_TYPE,
                   {d.json_text('SPEC', 'function')} AS TRANSFORMATION
            FROM SLUICE_CATALOG WHERE KIND = 'TRANSFORMATION'""",
        f"""{d.create_view} DBA_TYPES AS
            SELECT OWNER, NAME AS TYPE_NAME, {d.json_text('SPEC', 'kind')} AS TYPECODE,
                   {d.json_array_length('SPEC', 'attributes')} AS ATTRIBUTES
            FROM SLUICE_CATALOG WHERE KIND = 'TYPE'""",
        # security facts (sluice.security keeps them in SLUICE_CATALOG; seed 004 Table 17-7)
        f"""{d.create_view} DBA_USERS AS
            SELECT NAME AS USERNAME, 'OPEN' AS ACCOUNT_STATUS, CASE WHEN CAST({d.json_text('SPEC', 'superuser')} AS TEXT) IN ('1', 'true') THEN 'YES' ELSE 'NO' END AS ADMINISTRATOR
            FROM SLUICE_CATALOG WHERE KIND = 'USER'""",
        f"""{d.create_view} DBA_SUBSCR_REGISTRATIONS AS
            SELECT NAME AS REG_ID, {d.json_text('SPEC', 'name')} AS SUBSCRIPTION_NAME,
                   {d.json_text('SPEC', 'location')} AS LOCATION_NAME,
                   {d.json_text('SPEC', 'user')} AS USERNAME, {d.json_text('SPEC', 'context')} AS USER_CONTEXT,
                   'AQ' AS NAMESPACE, {d.json_text('SPEC', 'presentation')} AS PRESENTATION,
                   {d.json_text('SPEC', 'protocol')} AS PROTOCOL, 'DB REG' AS STATUS,
                   {_json_int(d, 'qos')} AS QOSFLAGS, {_json_int(d, 'timeout')} AS TIMEOUT,
                   {d.epoch_to_timestamp('CAST(' + d.json_text('SPEC', 'created') + ' AS ' + r + ')')} AS REG_TIME,
                   {_json_int(d, 'grouping_class')} AS NTFN_GROUPING_CLASS,
                   {_json_int(d, 'grouping_value')} AS NTFN_GROUPING_VALUE,
                   {_json_int(d, 'grouping_type')} AS NTFN_GROUPING_TYPE,
                   {_json_int(d, 'grouping_repeat')} AS NTFN_GROUPING_REPEAT_COUNT
            FROM SLUICE_CATALOG WHERE KIND = 'REGISTRATION'""",
        f"""{d.create_view} DBA_AQ_AGENTS AS
            SELECT NAME AS AGENT_NAME, CASE WHEN CAST({d.json_text('SPEC', 'enable_http')} AS TEXT) IN ('1', 'true') THEN 'YES' ELSE 'NO' END AS HTTP_ENABLED,
                   CASE WHEN CAST({d.json_text('SPEC', 'enable_smtp')} AS TEXT) IN ('1', 'true') THEN 'YES' ELSE 'NO' END AS SMTP_ENABLED,
                   CASE WHEN CAST({d.json_text('SPEC', 'enable_anyp')} AS TEXT) IN ('1', 'true') THEN 'YES' ELSE 'NO' END AS ANYP_ENABLED
            FROM SLUICE_CATALOG WHERE KIND = 'AGENT'""",
        *capture_ddl(d),
        *streams_rules_ddl(d),
        *hosting_ddl(d),
        *propagation_ddl(d),
        *apply_ddl(d),
        *dba_capture_ddl(d),
        *pipeline_ddl(d),
        f"""{d.create_view} AQ$INTERNET_USERS AS
            SELECT A.AGENT_NAME, M.NAME AS DB_USERNAME, A.HTTP_ENABLED, A.SMTP_ENABLED,
                   A.ANYP_ENABLED AS FTP_ENABLED
            FROM DBA_AQ_AGENTS A
            LEFT JOIN SLUICE_CATALOG M ON M.KIND = 'AGENTUSER' AND M.OWNER = A.AGENT_NAME""",
        f"""{d.create_view} DBA_AQ_AGENT_PRIVS AS
            SELECT AGENT_NAME, DB_USERNAME, HTTP_ENABLED AS HTTP, SMTP_ENABLED AS SMTP
            FROM AQ$INTERNET_USERS WHERE DB_USERNAME IS NOT NULL""",
        *privilege_ddl(d),
        *monitoring_ddl(d),
    ]
    if d.name == "postgresql":
        # the views that depend on the session's user read it from a session setting;
        # SQLite creates them per connection instead (see user_view_ddl)
        stmts += [f"{d.create_view} {name} AS " + body.format(**PG_SESSION_SETTINGS) for name, body in USER_VIEWS]
        stmts += PG_FUNCTIONS + [PG_ZONE_FUNCTION]
    return stmts


def _yes(d: Dialect, doc: str, key: str) -> str:
    """'YES' / 'NO' of a JSON boolean member (SQLite's 1/0, PostgreSQL's true/false)."""
    return f"CASE WHEN CAST({d.json_text(doc, key)} AS TEXT) IN ('1', 'true') THEN 'YES' ELSE 'NO' END"


# what Oracle's catqueue.sql gives AQ_ADMINISTRATOR_ROLE WITH GRANT OPTION
RULE_OBJ_PRIVILEGES = frozenset({"CREATE_RULE_OBJ", "CREATE_RULE_SET_OBJ", "CREATE_EVALUATION_CONTEXT_OBJ"})
# the roles every store has and what Oracle's give, as far as AQ and the rules engine are
# concerned: system privileges (their DBMS_AQADM / DBMS_RULE_ADM names), those of them held
# WITH ADMIN OPTION, EXECUTE on SYS's packages.  No catalog rows: sluice.security.catalog
# counts them for a role's holders, and DBA_SYS_PRIVS / DBA_TAB_PRIVS list them from here
# (privilege_ddl).  CREATE ROLE adds other roles (ROLEDEF rows).
ROLE_GRANTS: dict[str, dict[str, frozenset[str]]] = {
    "CONNECT": {"sys": frozenset({"CREATE_SESSION"}), "exec": frozenset()},
    "RESOURCE": {"sys": frozenset(), "exec": frozenset()},
    "AQ_USER_ROLE": {"sys": frozenset(), "exec": frozenset({"DBMS_AQ", "DBMS_AQIN", "DBMS_AQJMS"})},
    "AQ_ADMINISTRATOR_ROLE": {"sys": frozenset({"ENQUEUE_ANY", "DEQUEUE_ANY", "MANAGE_ANY", *RULE_OBJ_PRIVILEGES}),
                              "admin": RULE_OBJ_PRIVILEGES,
                              "exec": frozenset({"DBMS_AQ", "DBMS_AQADM", "DBMS_AQIN", "DBMS_AQJMS",
                                                 "DBMS_AQELM"})},
    "SELECT_CATALOG_ROLE": {"sys": frozenset({"MONITOR"}), "exec": frozenset()},
    "DBA": {"sys": frozenset(), "exec": frozenset()},   # DBA makes a superuser (see UserInfo)
}
PREDEFINED_ROLES = tuple(ROLE_GRANTS)


def _constant_rows(columns: tuple[str, ...], values: list[tuple[str, ...]]) -> str:
    """A constant table as a query (``SELECT 'A' AS C1, … UNION ALL SELECT …``: SQLite's
    VALUES cannot name its columns); ``values`` must not be empty."""
    def lit(v: str) -> str:
        return "'" + v.replace("'", "''") + "'"
    return " UNION ALL ".join("SELECT " + ", ".join(f"{lit(v)} AS {c}" for c, v in zip(columns, row))
                              for row in values)


def privilege_ddl(d: Dialect) -> list[str]:
    """DBA_SYS_PRIVS, DBA_TAB_PRIVS, DBA_ROLES and DBA_ROLE_PRIVS over the security catalog's rows (see
    :mod:`sluice.security.catalog`) and what the predefined roles give (ROLE_GRANTS, GRANTEE the
    role, as Oracle's dictionary lists them): system privileges (SYSPRIV, stored by their
    DBMS_AQADM / DBMS_RULE_ADM names, shown by Oracle's SQL names: MANAGE_ANY is MANAGE ANY
    QUEUE, CREATE_RULE_SET_OBJ is CREATE RULE SET), and object privileges on queues
    (QUEUEPRIV), rule objects (RULEPRIV, ``TYPE.OWNER.NAME``), tables (TABPRIV), packages
    and registered routines (EXECPRIV: ``DBMS_AQ``, ``OWNER.NAME``)."""
    n = "C.NAME"
    sql_name = (f"CASE WHEN substr({n}, length({n}) - 3) = '_ANY' THEN REPLACE({n}, '_', ' ') || ' QUEUE' "
                f"WHEN substr({n}, length({n}) - 3) = '_OBJ' "
                f"THEN REPLACE(substr({n}, 1, length({n}) - 4), '_', ' ') ELSE REPLACE({n}, '_', ' ') END")
    rest = _part(d, n, 2)          # OWNER.NAME of TYPE.OWNER.NAME

    def object_rows(kind: str, privilege: str, owner: str, name: str, type_: str) -> str:
        held = d.json_text("C.SPEC", privilege)
        return (f"SELECT C.OWNER AS GRANTEE, {owner} AS OWNER, {name} AS TABLE_NAME, "
                f"{d.json_text(held, 'grantor')} AS GRANTOR, '{privilege}' AS PRIVILEGE, "
                f"{_yes(d, held, 'grant_option')} AS GRANTABLE, 'NO' AS HIERARCHY, {type_} AS TYPE "
                f"FROM SLUICE_CATALOG C WHERE C.KIND = '{kind}' AND {held} IS NOT NULL")
    rows = [object_rows("QUEUEPRIV", p, _part(d, n, 1), _part(d, n, 2), "'QUEUE'")
            for p in ("ENQUEUE", "DEQUEUE")]
    rows += [object_rows("RULEPRIV", p, _part(d, rest, 1), _part(d, rest, 2),
                         f"REPLACE({_part(d, n, 1)}, '_', ' ')") for p in ("ALTER", "EXECUTE")]
    rows.append(object_rows("TABPRIV", "SELECT", _part(d, n, 1), _part(d, n, 2), "'TABLE'"))
    # the predefined roles' EXECUTE on SYS's packages (ROLE_GRANTS), granted by SYS, unless a
    # GRANT stored the same (its row shows)
    role_exec = _constant_rows(("GRANTEE", "NAME"), sorted((r, p) for r, g in ROLE_GRANTS.items() for p in g["exec"]))
    rows.append("SELECT R.GRANTEE, 'SYS' AS OWNER, R.NAME AS TABLE_NAME, 'SYS' AS GRANTOR, 'EXECUTE' AS PRIVILEGE, "
                "'NO' AS GRANTABLE, 'NO' AS HIERARCHY, 'PACKAGE' AS TYPE "
                f"FROM ({role_exec}) R WHERE NOT EXISTS (SELECT 1 FROM SLUICE_CATALOG S "
                "WHERE S.KIND = 'EXECPRIV' AND S.OWNER = R.GRANTEE AND S.NAME = R.NAME)")
    routine = f"{n} LIKE '%.%'"     # OWNER.NAME: a registered routine; else a package of SYS
    rows.append(f"SELECT C.OWNER AS GRANTEE, CASE WHEN {routine} THEN {_part(d, n, 1)} ELSE 'SYS' END AS OWNER, "
                f"{_part(d, n, 2)} AS TABLE_NAME, "
                f"{d.json_text('C.SPEC', 'grantor')} AS GRANTOR, 'EXECUTE' AS PRIVILEGE, "
                f"{_yes(d, 'C.SPEC', 'admin_option')} AS GRANTABLE, 'NO' AS HIERARCHY, "
                f"CASE WHEN {routine} THEN 'PROCEDURE' ELSE 'PACKAGE' END AS TYPE "
                f"FROM SLUICE_CATALOG C WHERE C.KIND = 'EXECPRIV'")
    # the predefined roles' system privileges (ROLE_GRANTS), unless a GRANT stored the same
    role_sys = _constant_rows(("OWNER", "NAME", "ADMIN_OPTION"), sorted(
        (r, p, "YES" if p in g.get("admin", ()) else "NO") for r, g in ROLE_GRANTS.items() for p in g["sys"]))
    return [
        f"""{d.create_view} DBA_SYS_PRIVS AS
            SELECT C.OWNER AS GRANTEE, {sql_name} AS PRIVILEGE, C.ADMIN_OPTION
            FROM (SELECT OWNER, NAME, {_yes(d, 'SPEC', 'admin_option')} AS ADMIN_OPTION
                  FROM SLUICE_CATALOG WHERE KIND = 'SYSPRIV'
                  UNION ALL SELECT R.OWNER, R.NAME, R.ADMIN_OPTION FROM ({role_sys}) R
                  WHERE NOT EXISTS (SELECT 1 FROM SLUICE_CATALOG S WHERE S.KIND = 'SYSPRIV'
                                    AND S.OWNER = R.OWNER AND S.NAME = R.NAME)) C""",
        f"""{d.create_view} DBA_TAB_PRIVS AS {" UNION ALL ".join(rows)}""",
        f"""{d.create_view} DBA_ROLES AS
            SELECT NAME AS ROLE, 'NO' AS PASSWORD_REQUIRED, 'NONE' AS AUTHENTICATION_TYPE
            FROM SLUICE_CATALOG WHERE KIND = 'ROLEDEF' UNION ALL """
        + " UNION ALL ".join(f"SELECT '{r}', 'NO', 'NONE'" for r in PREDEFINED_ROLES),
        f"""{d.create_view} DBA_ROLE_PRIVS AS
            SELECT C.OWNER AS GRANTEE, C.NAME AS GRANTED_ROLE, {_yes(d, 'C.SPEC', 'admin_option')} AS ADMIN_OPTION,
                   'YES' AS DEFAULT_ROLE
            FROM SLUICE_CATALOG C WHERE C.KIND = 'ROLE'""",
    ]


def _spec_readers(d: Dialect, alias: str) -> tuple:
    """Readers of the catalog row ``alias``'s JSON spec: a key as text, a key as an integer."""
    def spec(key: str) -> str:
        return d.json_text(f"{alias}.SPEC", key)

    def spec_int(key: str) -> str:
        return f"CAST({spec(key)} AS {d.int_type})"
    return spec, spec_int


def capture_ddl(d: Dialect) -> list[str]:
    """Streams capture processes (:mod:`sluice.streams.capture`): their definitions are
    ``SLUICE_CATALOG`` rows of kind CAPTURE; what a running capture writes with every batch
    it enqueues, in the same transaction (its position in the source's log, counters,
    state) is a ``SLUICE_CAPTURE_PROGRESS`` row; the tables it cannot capture are
    ``SLUICE_STREAMS_UNSUPPORTED`` rows.  Views: DBA_CAPTURE, V$STREAMS_CAPTURE,
    DBA_STREAMS_UNSUPPORTED (Oracle's columns, plus REPLICATION_SLOT and STAGING)."""
    i, r = d.int_type, d.real_type
    ts = d.epoch_to_timestamp
    spec, spec_int = _spec_readers(d, "C")
    return [
        f"""CREATE TABLE IF NOT EXISTS SLUICE_CAPTURE_PROGRESS (
            OWNER TEXT NOT NULL, NAME TEXT NOT NULL,
            POSITION_LSN {i}, CAPTURED_SCN {i}, APPLIED_SCN {i}, LAST_ENQUEUED_SCN {i},
            TOTAL_MESSAGES_CAPTURED {i} NOT NULL DEFAULT 0,
            TOTAL_MESSAGES_ENQUEUED {i} NOT NULL DEFAULT 0,
            TOTAL_TRANSACTIONS {i} NOT NULL DEFAULT 0,
            CAPTURE_MESSAGE_NUMBER {i}, CAPTURE_MESSAGE_CREATE_TIME {r}, CAPTURE_TIME {r},
            ENQUEUE_MESSAGE_NUMBER {i}, ENQUEUE_MESSAGE_CREATE_TIME {r}, ENQUEUE_TIME {r},
            STATE TEXT, STATE_CHANGED_TIME {r}, STARTUP_TIME {r},
            PRIMARY KEY (OWNER, NAME))""",
        # buffered staging: how far each consumer took a capture's LCRs and committed
        # (commit SCN, SCN of the last LCR), written in the consumer's own transaction
        f"""CREATE TABLE IF NOT EXISTS SLUICE_CAPTURE_CONSUMED (
            OWNER TEXT NOT NULL, NAME TEXT NOT NULL, CONSUMER TEXT NOT NULL,
            COMMIT_SCN {i} NOT NULL, SCN {i} NOT NULL, PRIMARY KEY (OWNER, NAME, CONSUMER))""",
        # a capture's TXN_LCR_SPILL_THRESHOLD: the LCRs of the large source transaction it is
        # reading, out of its memory until the commit stages them (streams.capture.spill);
        # SEQ 0 is the transaction's own row (how far it is spilled)
        f"""CREATE TABLE IF NOT EXISTS SLUICE_CAPTURE_SPILL (
            OWNER TEXT NOT NULL, NAME TEXT NOT NULL, SEQ {i} NOT NULL, KIND TEXT NOT NULL,
            MESSAGE TEXT NOT NULL, PRIMARY KEY (OWNER, NAME, SEQ))""",
        f"""CREATE TABLE IF NOT EXISTS SLUICE_STREAMS_UNSUPPORTED (
            OWNER TEXT NOT NULL, TABLE_NAME TEXT NOT NULL, REASON TEXT NOT NULL,
            AUTO_FILTERED TEXT NOT NULL, CAPTURE_OWNER TEXT, CAPTURE_NAME TEXT, SCN {i},
            NOTED {r}, PRIMARY KEY (OWNER, TABLE_NAME, REASON))""",
        # combined capture and apply (sluice.streams.capture.combined): whether the capture
        # sends straight to its apply's queue, and through which propagation schedule
        f"""CREATE TABLE IF NOT EXISTS SLUICE_CAPTURE_COMBINED (
            OWNER TEXT NOT NULL, NAME TEXT NOT NULL, OPTIMIZATION {i} NOT NULL DEFAULT 0,
            QSCHEMA TEXT, QNAME TEXT, DESTINATION TEXT, PRIMARY KEY (OWNER, NAME))""",
        f"""{d.create_view} V$STREAMS_CAPTURE AS
            SELECT C.NAME AS CAPTURE_NAME, {ts('P.STARTUP_TIME')} AS STARTUP_TIME,
                   P.STATE, {ts('P.STATE_CHANGED_TIME')} AS STATE_CHANGED_TIME,
                   P.TOTAL_MESSAGES_CAPTURED, P.TOTAL_MESSAGES_ENQUEUED,
                   P.TOTAL_MESSAGES_CAPTURED AS TOTAL_MESSAGES_CREATED,
                   P.TOTAL_TRANSACTIONS AS TOTAL_TRANSACTIONS_CAPTURED,
                   {ts('P.CAPTURE_TIME')} AS CAPTURE_TIME, P.CAPTURE_MESSAGE_NUMBER,
                   {ts('P.CAPTURE_MESSAGE_CREATE_TIME')} AS CAPTURE_MESSAGE_CREATE_TIME,
                   {ts('P.ENQUEUE_TIME')} AS ENQUEUE_TIME, P.ENQUEUE_MESSAGE_NUMBER,
                   {ts('P.ENQUEUE_MESSAGE_CREATE_TIME')} AS ENQUEUE_MESSAGE_CREATE_TIME,
                   P.ENQUEUE_TIME - P.ENQUEUE_MESSAGE_CREATE_TIME AS LATENCY_SECONDS,
                   COALESCE(X.OPTIMIZATION, 0) AS OPTIMIZATION
            FROM SLUICE_CATALOG C
            JOIN SLUICE_CAPTURE_PROGRESS P ON P.OWNER = C.OWNER AND P.NAME = C.NAME
            LEFT JOIN SLUICE_CAPTURE_COMBINED X ON X.OWNER = C.OWNER AND X.NAME = C.NAME
            WHERE C.KIND = 'CAPTURE' AND P.STATE IS NOT NULL""",
        # synchronous captures (sluice.streams.capture.sync): SLUICE_CATALOG rows of kind
        # SYNC_CAPTURE; not in DBA_CAPTURE, which lists capture processes only (as Oracle's)
        f"""{d.create_view} DBA_SYNC_CAPTURE AS
            SELECT C.NAME AS CAPTURE_NAME, {spec('queue_name')} AS QUEUE_NAME,
                   {spec('queue_owner')} AS QUEUE_OWNER, {spec('rule_set_name')} AS RULE_SET_NAME,
                   {spec('rule_set_owner')} AS RULE_SET_OWNER, {spec('capture_user')} AS CAPTURE_USER
            FROM SLUICE_CATALOG C WHERE C.KIND = 'SYNC_CAPTURE'""",
        f"""{d.create_view} DBA_SYNC_CAPTURE_TABLES AS
            SELECT DISTINCT {_tables_item(d, 0)} AS TABLE_OWNER, {_tables_item(d, 1)} AS TABLE_NAME,
                   'YES' AS ENABLED
            FROM SLUICE_CATALOG C, {_tables_of(d)} WHERE C.KIND = 'SYNC_CAPTURE'""",
        f"""{d.create_view} DBA_STREAMS_UNSUPPORTED AS
            SELECT OWNER, TABLE_NAME, REASON, AUTO_FILTERED, CAPTURE_NAME, SCN
            FROM SLUICE_STREAMS_UNSUPPORTED""",
    ]


def dba_capture_ddl(d: Dialect) -> list[str]:
    """DBA_CAPTURE (after :func:`apply_ddl`: its APPLIED_SCN reads SLUICE_APPLY_PROGRESS).

    APPLIED_SCN (Oracle's reference: "all changes below this SCN have been dequeued by all
    apply processes that apply changes captured by this capture process"): with BUFFERED
    staging the capture's confirmed position, which moves only past what every consumer
    took and committed (:mod:`sluice.streams.capture.staging`); with PERSISTENT staging the
    lowest commit SCN the apply processes of its queue applied of its source database
    (SLUICE_APPLY_PROGRESS, written with each apply's dequeue) -- those that apply captured
    LCRs of this source database; one that has applied nothing counts 0; NULL when there
    is none."""
    r = d.real_type
    ts = d.epoch_to_timestamp
    spec, spec_int = _spec_readers(d, "C")

    apply = _spec_readers(d, "A")[0]
    applied = (f"SELECT MIN(COALESCE(AP.APPLIED_MESSAGE_NUMBER, 0)) FROM SLUICE_CATALOG A "
               f"LEFT JOIN SLUICE_APPLY_PROGRESS AP ON AP.APPLY_NAME = A.NAME "
               f"AND AP.SOURCE_DATABASE = {spec('source_database')} "
               f"WHERE A.KIND = 'APPLY' AND {apply('queue_owner')} = {spec('queue_owner')} "
               f"AND {apply('queue_name')} = {spec('queue_name')} "
               f"AND CAST({apply('apply_captured')} AS TEXT) IN ('1', 'true') "
               f"AND ({apply('source_database')} IS NULL "
               f"OR {apply('source_database')} = {spec('source_database')})")
    return [
        f"""{d.create_view} DBA_CAPTURE AS
            SELECT C.NAME AS CAPTURE_NAME, {spec('queue_name')} AS QUEUE_NAME,
                   {spec('queue_owner')} AS QUEUE_OWNER, {spec('rule_set_name')} AS RULE_SET_NAME,
                   {spec('rule_set_owner')} AS RULE_SET_OWNER, {spec('capture_user')} AS CAPTURE_USER,
                   {spec_int('start_scn')} AS START_SCN, {spec('status')} AS STATUS,
                   P.CAPTURED_SCN,
                   CASE WHEN COALESCE({spec('staging')}, 'PERSISTENT') = 'BUFFERED' THEN P.APPLIED_SCN
                        ELSE ({applied}) END AS APPLIED_SCN,
                   'NO' AS USE_DATABASE_LINK,
                   {spec_int('first_scn')} AS FIRST_SCN, {spec('source_database')} AS SOURCE_DATABASE,
                   {spec('negative_rule_set_name')} AS NEGATIVE_RULE_SET_NAME,
                   {spec('negative_rule_set_owner')} AS NEGATIVE_RULE_SET_OWNER,
                   P.POSITION_LSN AS MAX_CHECKPOINT_SCN, P.POSITION_LSN AS REQUIRED_CHECKPOINT_SCN,
                   'IMPLICIT' AS LOGFILE_ASSIGNMENT,
                   {ts('CAST(' + spec('status_change_time') + ' AS ' + r + ')')} AS STATUS_CHANGE_TIME,
                   {spec_int('error_number')} AS ERROR_NUMBER, {spec('error_message')} AS ERROR_MESSAGE,
                   {spec('version')} AS VERSION, {spec('capture_type')} AS CAPTURE_TYPE,
                   P.LAST_ENQUEUED_SCN, {spec('checkpoint_retention_time')} AS CHECKPOINT_RETENTION_TIME,
                   {spec('slot')} AS REPLICATION_SLOT,
                   COALESCE({spec('staging')}, 'PERSISTENT') AS STAGING
            FROM SLUICE_CATALOG C
            LEFT JOIN SLUICE_CAPTURE_PROGRESS P ON P.OWNER = C.OWNER AND P.NAME = C.NAME
            WHERE C.KIND = 'CAPTURE'""",
    ]


# ---- Spark pipelines (sluice.pipeline) -------------------------------------------------
def pipeline_ddl(d: Dialect) -> list[str]:
    """A pipeline run on Spark (``sluice pipeline run``) reads a queue as a consumer: its
    low-watermark (POSITION: the last commit SCN, or SEQ for queues not ordered by commit
    time, whose messages it has acknowledged) advances in the store transaction that
    consumes those messages, after the batch's sink has committed.  The runner writes its
    figures (rate, lag, last error) here too, for ``sluice pipeline status``."""
    i, r = d.int_type, d.real_type

    def t(key: str) -> str:
        return d.json_text("SPEC", key)
    return [
        f"""CREATE TABLE IF NOT EXISTS SLUICE_PIPELINE_PROGRESS (
            NAME TEXT NOT NULL, QUEUE TEXT NOT NULL, CONSUMER_NAME TEXT,
            POSITION {i}, BATCHES {i} NOT NULL DEFAULT 0, TOTAL_MESSAGES {i} NOT NULL DEFAULT 0,
            LAST_BATCH_MESSAGES {i}, LAST_BATCH_TIME {r}, LAST_BATCH_SECONDS {r},
            LAG_SECONDS {r}, MESSAGES_PER_SECOND {r}, STATE TEXT, LAST_ERROR TEXT,
            UI_URL TEXT, CHECKPOINT TEXT, STARTED {r},
            PRIMARY KEY (NAME))""",
        # the source transactions whose SET_ENQUEUE_DESTINATION messages a Spark apply sink
        # enqueued (in the same store transaction), so a replayed micro-batch does not
        # enqueue them again; kept until a later micro-batch starts (sluice.pipeline.sinks)
        f"""CREATE TABLE IF NOT EXISTS SLUICE_PIPELINE_ENQUEUED (
            APPLY_NAME TEXT NOT NULL, IDENT TEXT NOT NULL, BATCH_ID {i} NOT NULL,
            PRIMARY KEY (APPLY_NAME, IDENT))""",
        # DBMS_STREAMS_ADM's declarative transformations (sluice.streams.transform.adm)
        f"""{d.create_view} DBA_STREAMS_TRANSFORMATIONS AS
            SELECT {t('rule')} AS RULE_NAME, OWNER AS RULE_OWNER,
                   'DECLARATIVE TRANSFORMATION' AS TRANSFORM_TYPE,
                   CASE WHEN {t('kind')} = 'RENAME SCHEMA' THEN {t('from_name')} END AS FROM_SCHEMA_NAME,
                   CASE WHEN {t('kind')} = 'RENAME SCHEMA' THEN {t('to_name')} END AS TO_SCHEMA_NAME,
                   CASE WHEN {t('kind')} = 'RENAME TABLE' THEN {t('schema')} || '.' || {t('table')} END
                       AS FROM_TABLE_NAME,
                   CASE WHEN {t('kind')} = 'RENAME TABLE' THEN {t('to_schema')} || '.' || {t('to_name')} END
                       AS TO_TABLE_NAME,
                   {t('schema')} AS SCHEMA_NAME, {t('table')} AS TABLE_NAME,
                   CASE WHEN {t('kind')} = 'RENAME COLUMN' THEN {t('from_name')} END AS FROM_COLUMN_NAME,
                   CASE WHEN {t('kind')} = 'RENAME COLUMN' THEN {t('to_name')} END AS TO_COLUMN_NAME,
                   {t('column')} AS COLUMN_NAME, {t('value_type')} AS VALUE_TYPE,
                   {t('kind')} AS DECLARATIVE_TYPE,
                   CASE {t('kind')} WHEN 'KEEP COLUMNS' THEN 1 WHEN 'DELETE COLUMN' THEN 2
                        WHEN 'RENAME COLUMN' THEN 3 WHEN 'ADD COLUMN' THEN 4 WHEN 'RENAME TABLE' THEN 5
                        ELSE 6 END AS PRECEDENCE,
                   CAST({t('step_number')} AS {i}) AS STEP_NUMBER
            FROM SLUICE_CATALOG WHERE KIND = 'STREAMS TRANSFORMATION'""",
    ]
# ---- end of Spark pipelines -------------------------------------------------------------


# -- rules and system-created rules (sluice.rules, sluice.streams.rulegen, .apply) --------
def _part(d: Dialect, expr: str, n: int) -> str:
    """Owner (1) or name (2) of an ``OWNER.NAME`` text."""
    if d.name == "postgresql":
        return f"split_part({expr}, '.', 1)" if n == 1 else f"substr({expr}, strpos({expr}, '.') + 1)"
    return f"substr({expr}, 1, instr({expr}, '.') - 1)" if n == 1 else f"substr({expr}, instr({expr}, '.') + 1)"


def streams_rules_ddl(d: Dialect) -> list[str]:
    """Views over the rules engine's catalog rows (kinds RULE, RULE_SET, RULE_SET_RULE,
    EVALUATION_CONTEXT), DBMS_STREAMS_ADM's records of the rules it made (STREAMS_RULE),
    apply processes (APPLY) and messaging clients (MESSAGE_CONSUMER), with Oracle's
    column names.  No tables: every fact is a SLUICE_CATALOG row."""
    def j(alias: str, key: str) -> str:
        return d.json_text(f"{alias}.SPEC", key)
    r = d.real_type
    streams_rule_cols = {
        "STREAMS_TYPE": "K.STREAMS_TYPE", "STREAMS_NAME": "K.STREAMS_NAME",
        "RULE_SET_OWNER": "K.RS_OWNER", "RULE_SET_NAME": "K.RS_NAME",
        "RULE_OWNER": "R.OWNER", "RULE_NAME": "R.NAME", "RULE_CONDITION": j("R", "condition"),
        "RULE_SET_TYPE": "K.RULE_SET_TYPE", "STREAMS_RULE_TYPE": j("S", "streams_rule_type"),
        "SCHEMA_NAME": j("S", "schema_name"), "OBJECT_NAME": j("S", "object_name"),
        "SUBSETTING_OPERATION": j("S", "subsetting_operation"), "DML_CONDITION": j("S", "dml_condition"),
        "INCLUDE_TAGGED_LCR": j("S", "include_tagged_lcr"), "SOURCE_DATABASE": j("S", "source_database"),
        "RULE_TYPE": j("S", "rule_type"), "MESSAGE_TYPE_OWNER": j("S", "message_type_owner"),
        "MESSAGE_TYPE_NAME": j("S", "message_type_name"),
        "MESSAGE_RULE_VARIABLE": j("S", "message_rule_variable"),
        "ORIGINAL_RULE_CONDITION": j("S", "original_rule_condition"),
        "SAME_RULE_CONDITION": f"CASE WHEN S.NAME IS NULL THEN NULL WHEN {j('R', 'condition')} = "
                               f"{j('S', 'original_rule_condition')} THEN 'YES' ELSE 'NO' END",
    }
    # every Streams client's rule sets, one row per side (the clients' catalog kinds)
    clients = " UNION ALL ".join(
        f"SELECT CASE C.KIND WHEN 'MESSAGE_CONSUMER' THEN 'DEQUEUE' ELSE C.KIND END AS STREAMS_TYPE, "
        f"C.NAME AS STREAMS_NAME, {j('C', prefix + '_owner')} AS RS_OWNER, "
        f"{j('C', prefix + '_name')} AS RS_NAME, '{side}' AS RULE_SET_TYPE FROM SLUICE_CATALOG C "
        f"WHERE C.KIND IN ('CAPTURE', 'SYNC_CAPTURE', 'PROPAGATION', 'APPLY', 'MESSAGE_CONSUMER')"
        for prefix, side in (("rule_set", "POSITIVE"), ("negative_rule_set", "NEGATIVE")))
    select = ", ".join(f"{expr} AS {name}" for name, expr in streams_rule_cols.items())

    def by_level(columns: str, where: str) -> str:
        return f"SELECT {columns} FROM DBA_STREAMS_RULES WHERE {where}"
    return [
        f"""{d.create_view} DBA_RULES AS
            SELECT OWNER AS RULE_OWNER, NAME AS RULE_NAME, {j('C', 'condition')} AS RULE_CONDITION,
                   {_part(d, j('C', 'evaluation_context'), 1)} AS RULE_EVALUATION_CONTEXT_OWNER,
                   {_part(d, j('C', 'evaluation_context'), 2)} AS RULE_EVALUATION_CONTEXT_NAME,
                   {j('C', 'action_context')} AS RULE_ACTION_CONTEXT, {j('C', 'comment')} AS RULE_COMMENT
            FROM SLUICE_CATALOG C WHERE KIND = 'RULE'""",
        # the tables an evaluation context's table aliases name (whose SELECT its users need)
        f"""{d.create_view} DBA_EVALUATION_CONTEXT_TABLES AS
            SELECT C.OWNER AS EVALUATION_CONTEXT_OWNER, C.NAME AS EVALUATION_CONTEXT_NAME,
                   {_tables_item(d, 0)} AS TABLE_ALIAS, {_tables_item(d, 1)} AS TABLE_NAME
            FROM SLUICE_CATALOG C, {_tables_of(d, "table_aliases")} WHERE C.KIND = 'EVALUATION_CONTEXT'""",
        f"""{d.create_view} DBA_RULE_SETS AS
            SELECT OWNER AS RULE_SET_OWNER, NAME AS RULE_SET_NAME,
                   {_part(d, j('C', 'evaluation_context'), 1)} AS RULE_SET_EVAL_CONTEXT_OWNER,
                   {_part(d, j('C', 'evaluation_context'), 2)} AS RULE_SET_EVAL_CONTEXT_NAME,
                   {j('C', 'comment')} AS RULE_SET_COMMENT
            FROM SLUICE_CATALOG C WHERE KIND = 'RULE_SET'""",
        f"""{d.create_view} DBA_RULE_SET_RULES AS
            SELECT {_part(d, j('C', 'rule_set'), 1)} AS RULE_SET_OWNER,
                   {_part(d, j('C', 'rule_set'), 2)} AS RULE_SET_NAME,
                   {_part(d, j('C', 'rule'), 1)} AS RULE_OWNER, {_part(d, j('C', 'rule'), 2)} AS RULE_NAME,
                   'ENABLED' AS RULE_SET_RULE_ENABLED,
                   {_part(d, j('C', 'evaluation_context'), 1)} AS RULE_SET_RULE_EVAL_CTX_OWNER,
                   {_part(d, j('C', 'evaluation_context'), 2)} AS RULE_SET_RULE_EVAL_CTX_NAME,
                   {j('C', 'comment')} AS RULE_SET_RULE_COMMENT
            FROM SLUICE_CATALOG C WHERE KIND = 'RULE_SET_RULE'""",
        f"""{d.create_view} DBA_EVALUATION_CONTEXTS AS
            SELECT OWNER AS EVALUATION_CONTEXT_OWNER, NAME AS EVALUATION_CONTEXT_NAME,
                   {j('C', 'evaluation_function')} AS EVALUATION_FUNCTION,
                   {j('C', 'comment')} AS EVALUATION_CONTEXT_COMMENT
            FROM SLUICE_CATALOG C WHERE KIND = 'EVALUATION_CONTEXT'""",
        # every rule in a Streams client's rule sets; what DBMS_STREAMS_ADM recorded when it
        # made the rule for that client fills the rest (NULL for DBMS_RULE_ADM's rules)
        f"""{d.create_view} DBA_STREAMS_RULES AS
            SELECT {select}
            FROM ({clients}) K
            JOIN SLUICE_CATALOG M ON M.KIND = 'RULE_SET_RULE' AND M.OWNER = K.RS_OWNER
                 AND {j('M', 'rule_set')} = K.RS_OWNER || '.' || K.RS_NAME
            JOIN SLUICE_CATALOG R ON R.KIND = 'RULE' AND R.OWNER || '.' || R.NAME = {j('M', 'rule')}
            LEFT JOIN SLUICE_CATALOG S ON S.KIND = 'STREAMS_RULE' AND S.OWNER = R.OWNER AND S.NAME = R.NAME
                 AND {j('S', 'streams_name')} = K.STREAMS_NAME AND {j('S', 'streams_type')} = K.STREAMS_TYPE""",
        f"""{d.create_view} DBA_STREAMS_GLOBAL_RULES AS {by_level(
            "STREAMS_NAME, STREAMS_TYPE, RULE_TYPE, INCLUDE_TAGGED_LCR, SOURCE_DATABASE, RULE_NAME, "
            "RULE_OWNER, ORIGINAL_RULE_CONDITION AS RULE_CONDITION, RULE_SET_TYPE",
            "STREAMS_RULE_TYPE = 'GLOBAL'")}""",
        f"""{d.create_view} DBA_STREAMS_SCHEMA_RULES AS {by_level(
            "STREAMS_NAME, STREAMS_TYPE, SCHEMA_NAME, RULE_TYPE, INCLUDE_TAGGED_LCR, SOURCE_DATABASE, "
            "RULE_NAME, RULE_OWNER, ORIGINAL_RULE_CONDITION AS RULE_CONDITION, RULE_SET_TYPE",
            "STREAMS_RULE_TYPE = 'SCHEMA'")}""",
        f"""{d.create_view} DBA_STREAMS_TABLE_RULES AS {by_level(
            "STREAMS_NAME, STREAMS_TYPE, SCHEMA_NAME AS TABLE_OWNER, OBJECT_NAME AS TABLE_NAME, RULE_TYPE, "
            "DML_CONDITION, SUBSETTING_OPERATION, INCLUDE_TAGGED_LCR, SOURCE_DATABASE, RULE_NAME, "
            "RULE_OWNER, ORIGINAL_RULE_CONDITION AS RULE_CONDITION, RULE_SET_TYPE",
            "STREAMS_RULE_TYPE = 'TABLE'")}""",
        f"""{d.create_view} DBA_STREAMS_MESSAGE_RULES AS {by_level(
            "STREAMS_NAME, STREAMS_TYPE, MESSAGE_TYPE_NAME, MESSAGE_TYPE_OWNER, MESSAGE_RULE_VARIABLE, "
            "RULE_NAME, RULE_OWNER, ORIGINAL_RULE_CONDITION AS RULE_CONDITION, RULE_SET_TYPE",
            "MESSAGE_TYPE_NAME IS NOT NULL")}""",
        f"""{d.create_view} DBA_APPLY AS
            SELECT C.NAME AS APPLY_NAME, {j('C', 'queue_name')} AS QUEUE_NAME,
                   {j('C', 'queue_owner')} AS QUEUE_OWNER,
                   CASE WHEN CAST({j('C', 'apply_captured')} AS TEXT) IN ('1', 'true') THEN 'YES' ELSE 'NO' END
                       AS APPLY_CAPTURED,
                   {j('C', 'rule_set_name')} AS RULE_SET_NAME, {j('C', 'rule_set_owner')} AS RULE_SET_OWNER,
                   {j('C', 'apply_user')} AS APPLY_USER, {j('C', 'apply_database_link')} AS APPLY_DATABASE_LINK,
                   {j('C', 'apply_tag')} AS APPLY_TAG, {j('C', 'ddl_handler')} AS DDL_HANDLER,
                   {j('C', 'precommit_handler')} AS PRECOMMIT_HANDLER,
                   {j('C', 'message_handler')} AS MESSAGE_HANDLER, {j('C', 'status')} AS STATUS,
                   {j('C', 'negative_rule_set_name')} AS NEGATIVE_RULE_SET_NAME,
                   {j('C', 'negative_rule_set_owner')} AS NEGATIVE_RULE_SET_OWNER,
                   {d.epoch_to_timestamp('CAST(' + j('C', 'status_change_time') + ' AS ' + r + ')')}
                       AS STATUS_CHANGE_TIME,
                   CAST({j('C', 'error_number')} AS {d.int_type}) AS ERROR_NUMBER,
                   {j('C', 'error_message')} AS ERROR_MESSAGE,
                   {j('C', 'source_database')} AS SOURCE_DATABASE,
                   CASE WHEN CAST({j('C', 'apply_captured')} AS TEXT) IN ('1', 'true') THEN 'CAPTURED'
                        ELSE 'PERSISTENT' END AS MESSAGE_DELIVERY_MODE
            FROM SLUICE_CATALOG C WHERE C.KIND = 'APPLY'""",
        f"""{d.create_view} DBA_STREAMS_MESSAGE_CONSUMERS AS
            SELECT C.NAME AS STREAMS_NAME, {j('C', 'queue_name')} AS QUEUE_NAME,
                   {j('C', 'queue_owner')} AS QUEUE_OWNER,
                   {j('C', 'rule_set_name')} AS RULE_SET_NAME, {j('C', 'rule_set_owner')} AS RULE_SET_OWNER,
                   {j('C', 'negative_rule_set_name')} AS NEGATIVE_RULE_SET_NAME,
                   {j('C', 'negative_rule_set_owner')} AS NEGATIVE_RULE_SET_OWNER,
                   CAST(NULL AS TEXT) AS NOTIFICATION_TYPE, CAST(NULL AS TEXT) AS NOTIFICATION_ACTION,
                   CAST(NULL AS TEXT) AS NOTIFICATION_CONTEXT
            FROM SLUICE_CATALOG C WHERE C.KIND = 'MESSAGE_CONSUMER'""",
        # ALL_ views: what the user may see is not filtered (as ALL_QUEUES is not)
        *(f"{d.create_view} ALL_{name} AS SELECT * FROM DBA_{name}" for name in (
            "RULES", "RULE_SETS", "RULE_SET_RULES", "EVALUATION_CONTEXTS", "EVALUATION_CONTEXT_TABLES",
            "STREAMS_RULES",
            "STREAMS_GLOBAL_RULES", "STREAMS_SCHEMA_RULES", "STREAMS_TABLE_RULES",
            "STREAMS_MESSAGE_RULES", "APPLY", "STREAMS_MESSAGE_CONSUMERS")),
    ]


def _tables_of(d: Dialect, key: str = "tables") -> str:
    """The items of the spec's array ``key`` (a synchronous capture's ``tables``, an
    evaluation context's ``table_aliases``), as table ``T``."""
    if d.name == "sqlite":
        return f"json_each(C.SPEC, '$.{key}') T"
    return f"jsonb_array_elements(C.SPEC::jsonb -> '{key}') T(VALUE)"


def _tables_item(d: Dialect, i: int) -> str:
    return f"json_extract(T.VALUE, '$[{i}]')" if d.name == "sqlite" else f"(T.VALUE ->> {i})"


# ---- Streams propagation (sluice.streams.propagation) -----------------------------------
LEGACY_RECEIVED = "SLUICE_PROPAGATION_RECEIVED"


def legacy_received_ddl() -> list[str]:
    """Upgrading a store of schema version 5-11, whose ``SLUICE_PROPAGATION_RECEIVED`` held
    a row per message still in doubt: each becomes a row of one id in
    ``SLUICE_PROPAGATION_INDOUBT`` (the messages stay de-duplicated across the upgrade), and
    the old table goes.  Run only when that table exists."""
    return [f"""INSERT INTO SLUICE_PROPAGATION_INDOUBT (SOURCE_SITE, DEST_QUEUE, BATCH_ID, SOURCE_QUEUE,
                    RECEIVED, MSG_COUNT, MSGIDS)
                SELECT SOURCE_SITE, DEST_QUEUE, SOURCE_MSGID, SOURCE_QUEUE, RECEIVED, 1, SOURCE_MSGID
                FROM {LEGACY_RECEIVED} WHERE 1 = 1 ON CONFLICT DO NOTHING""",
            f"DROP TABLE {LEGACY_RECEIVED}"]


def propagation_ddl(d: Dialect) -> list[str]:
    """Propagation: database links and propagations are ``SLUICE_CATALOG`` rows (kinds
    DBLINK, PROPAGATION); a schedule, with what its runs record, is a
    ``SLUICE_QUEUE_SCHEDULES`` row; a destination remembers the messages it received, by
    the sending site and their ids there, in ``SLUICE_PROPAGATION_INDOUBT`` — a row per
    batch and destination queue holding the batch's ids (``MSGIDS``: ``MSG_COUNT`` ids of
    one length, end to end; ``BATCH_ID`` is the first) —, written in the transaction that
    enqueued them (exactly once) and dropped once the sender says it let them go
    (:mod:`sluice.streams.propagation.receiver`); ``SLUICE_PROPAGATION_RECEIVERS`` counts what each sender
    delivered.  Views: DBA_DB_LINKS,
    DBA_PROPAGATION, DBA_QUEUE_SCHEDULES, V$PROPAGATION_SENDER, V$PROPAGATION_RECEIVER
    (Oracle's columns)."""
    i, r = d.int_type, d.real_type
    ts = d.epoch_to_timestamp

    def spec(key: str) -> str:
        return d.json_text("C.SPEC", key)

    def tod(expr: str) -> str:   # Oracle's *_TIME columns: the time of day as HH24:MI:SS
        return f"SUBSTR(CAST({ts(expr)} AS TEXT), 12, 8)"

    def yes_no(expr: str) -> str:
        return f"CASE WHEN CAST({expr} AS TEXT) IN ('1', 'true') THEN 'TRUE' ELSE 'FALSE' END"
    return [
        f"""CREATE TABLE IF NOT EXISTS SLUICE_QUEUE_SCHEDULES (
            QSCHEMA TEXT NOT NULL, QNAME TEXT NOT NULL, DESTINATION TEXT NOT NULL,
            START_TIME {r} NOT NULL, DURATION {r}, NEXT_TIME TEXT, LATENCY {r} NOT NULL,
            DISABLED {i} NOT NULL DEFAULT 0, DESTINATION_QUEUE TEXT, DBLINK TEXT,
            LAST_RUN {r}, CURRENT_START {r}, NEXT_RUN {r}, WINDOW_START {r},
            TOTAL_TIME {r} NOT NULL DEFAULT 0, TOTAL_NUMBER {i} NOT NULL DEFAULT 0,
            TOTAL_BYTES {i} NOT NULL DEFAULT 0, MAX_NUMBER {i} NOT NULL DEFAULT 0,
            MAX_BYTES {i} NOT NULL DEFAULT 0, WINDOW_NUMBER {i} NOT NULL DEFAULT 0,
            WINDOW_BYTES {i} NOT NULL DEFAULT 0, WINDOWS {i} NOT NULL DEFAULT 0,
            FAILURES {i} NOT NULL DEFAULT 0, LAST_ERROR_TIME {r}, LAST_ERROR_MSG TEXT,
            SLIPPED {i} NOT NULL DEFAULT 0, ELAPSED_DEQUEUE_TIME {r} NOT NULL DEFAULT 0,
            ELAPSED_PICKLE_TIME {r} NOT NULL DEFAULT 0, MESSAGE_DELIVERY_MODE TEXT,
            PROCESS_NAME TEXT, SESSION_ID TEXT, VERSION {i} NOT NULL DEFAULT 0,
            PRIMARY KEY (QSCHEMA, QNAME, DESTINATION))""",
        f"""CREATE TABLE IF NOT EXISTS SLUICE_PROPAGATION_INDOUBT (
            SOURCE_SITE TEXT NOT NULL, DEST_QUEUE TEXT NOT NULL, BATCH_ID {d.blob_type} NOT NULL,
            SOURCE_QUEUE TEXT, RECEIVED {r} NOT NULL, MSG_COUNT {i} NOT NULL,
            MSGIDS {d.blob_type} NOT NULL,
            PRIMARY KEY (SOURCE_SITE, DEST_QUEUE, BATCH_ID))""",
        # per schedule, the (destination queue, message id)s of its last batch: written with
        # the source's commit, so a sender killed before its next batch tells the
        # destination to drop their de-duplication rows when it starts again
        """CREATE TABLE IF NOT EXISTS SLUICE_PROPAGATION_UNTOLD (
            QSCHEMA TEXT NOT NULL, QNAME TEXT NOT NULL, DESTINATION TEXT NOT NULL,
            ACKED TEXT NOT NULL, PRIMARY KEY (QSCHEMA, QNAME, DESTINATION))""",
        f"""CREATE TABLE IF NOT EXISTS SLUICE_PROPAGATION_RECEIVERS (
            SOURCE_SITE TEXT NOT NULL, SOURCE_QUEUE TEXT NOT NULL, DEST_QUEUE TEXT NOT NULL,
            TOTAL_MSGS {i} NOT NULL, LAST_RECEIVED {r} NOT NULL,
            PRIMARY KEY (SOURCE_SITE, SOURCE_QUEUE, DEST_QUEUE))""",
        f"""{d.create_view} DBA_DB_LINKS AS
            SELECT C.OWNER, C.NAME AS DB_LINK, {spec('username')} AS USERNAME,
                   {spec('host')} AS HOST,
                   {ts('CAST(' + spec('created') + ' AS ' + r + ')')} AS CREATED
            FROM SLUICE_CATALOG C WHERE C.KIND = 'DBLINK'""",
        f"""{d.create_view} DBA_PROPAGATION AS
            SELECT C.NAME AS PROPAGATION_NAME, {spec('source_queue_owner')} AS SOURCE_QUEUE_OWNER,
                   {spec('source_queue_name')} AS SOURCE_QUEUE_NAME,
                   {spec('destination_queue_owner')} AS DESTINATION_QUEUE_OWNER,
                   {spec('destination_queue_name')} AS DESTINATION_QUEUE_NAME,
                   {spec('destination_dblink')} AS DESTINATION_DBLINK,
                   {spec('rule_set_owner')} AS RULE_SET_OWNER, {spec('rule_set_name')} AS RULE_SET_NAME,
                   {spec('negative_rule_set_owner')} AS NEGATIVE_RULE_SET_OWNER,
                   {spec('negative_rule_set_name')} AS NEGATIVE_RULE_SET_NAME,
                   {yes_no(spec('queue_to_queue'))} AS QUEUE_TO_QUEUE,
                   {spec('status')} AS STATUS, {spec('error_message')} AS ERROR_MESSAGE,
                   {ts('CAST(' + spec('error_date') + ' AS ' + r + ')')} AS ERROR_DATE,
                   {spec('original_propagation_name')} AS ORIGINAL_PROPAGATION_NAME,
                   CAST(NULL AS {i}) AS ACKED_SCN, CAST(NULL AS {i}) AS AUTO_MERGE_THRESHOLD
            FROM SLUICE_CATALOG C WHERE C.KIND = 'PROPAGATION'""",
        f"""{d.create_view} DBA_QUEUE_SCHEDULES AS
            SELECT S.QSCHEMA AS SCHEMA, S.QNAME,
                   CASE WHEN S.DESTINATION_QUEUE IS NULL THEN S.DESTINATION
                        ELSE '"' || REPLACE(S.DESTINATION_QUEUE, '.', '"."') || '"'
                             || CASE WHEN S.DBLINK IS NULL THEN '' ELSE '@' || S.DBLINK END
                   END AS DESTINATION,
                   {ts('S.START_TIME')} AS START_DATE, {tod('S.START_TIME')} AS START_TIME,
                   CAST(S.DURATION AS {i}) AS PROPAGATION_WINDOW, S.NEXT_TIME, S.LATENCY,
                   CASE WHEN S.DISABLED = 1 THEN 'Y' ELSE 'N' END AS SCHEDULE_DISABLED,
                   S.PROCESS_NAME, S.SESSION_ID, CAST(NULL AS {i}) AS INSTANCE,
                   {ts('S.LAST_RUN')} AS LAST_RUN_DATE, {tod('S.LAST_RUN')} AS LAST_RUN_TIME,
                   {ts('S.CURRENT_START')} AS CURRENT_START_DATE,
                   {tod('S.CURRENT_START')} AS CURRENT_START_TIME,
                   {ts('S.NEXT_RUN')} AS NEXT_RUN_DATE, {tod('S.NEXT_RUN')} AS NEXT_RUN_TIME,
                   S.TOTAL_TIME, S.TOTAL_NUMBER, S.TOTAL_BYTES, S.MAX_NUMBER, S.MAX_BYTES,
                   CASE WHEN S.WINDOWS > 0 THEN CAST(S.TOTAL_NUMBER AS {r}) / S.WINDOWS ELSE 0 END AS AVG_NUMBER,
                   CASE WHEN S.TOTAL_NUMBER > 0 THEN CAST(S.TOTAL_BYTES AS {r}) / S.TOTAL_NUMBER ELSE 0 END AS AVG_SIZE,
                   CASE WHEN S.TOTAL_NUMBER > 0 THEN S.TOTAL_TIME / S.TOTAL_NUMBER ELSE 0 END AS AVG_TIME,
                   S.FAILURES, {ts('S.LAST_ERROR_TIME')} AS LAST_ERROR_DATE,
                   {tod('S.LAST_ERROR_TIME')} AS LAST_ERROR_TIME, S.LAST_ERROR_MSG,
                   COALESCE(S.MESSAGE_DELIVERY_MODE, 'PERSISTENT') AS MESSAGE_DELIVERY_MODE,
                   S.ELAPSED_DEQUEUE_TIME, S.ELAPSED_PICKLE_TIME,
                   'AQ_JOB$_' || S.QNAME AS JOB_NAME
            FROM SLUICE_QUEUE_SCHEDULES S""",
        f"""{d.create_view} V$PROPAGATION_SENDER AS
            SELECT S.QSCHEMA AS QUEUE_SCHEMA, S.QNAME AS QUEUE_NAME, S.DESTINATION AS DBLINK,
                   S.DESTINATION_QUEUE AS DST_QUEUE_NAME, S.TOTAL_NUMBER AS TOTAL_MSGS,
                   S.TOTAL_BYTES, S.ELAPSED_DEQUEUE_TIME, S.ELAPSED_PICKLE_TIME,
                   S.TOTAL_TIME AS ELAPSED_PROPAGATION_TIME,
                   CASE WHEN S.DISABLED = 1 THEN 'DISABLED' WHEN S.FAILURES > 0 THEN 'FAILED'
                        ELSE 'ENABLED' END AS STATE,
                   {ts('S.LAST_RUN')} AS LAST_MSG_ENQUEUE_TIME,
                   CASE WHEN EXISTS (SELECT 1 FROM SLUICE_CAPTURE_COMBINED X WHERE X.OPTIMIZATION > 0
                        AND X.QSCHEMA = S.QSCHEMA AND X.QNAME = S.QNAME AND X.DESTINATION = S.DESTINATION)
                        THEN 1 ELSE 0 END AS OPTIMIZATION
            FROM SLUICE_QUEUE_SCHEDULES S""",
        f"""{d.create_view} V$PROPAGATION_RECEIVER AS
            SELECT R.SOURCE_QUEUE AS SRC_QUEUE_NAME, R.SOURCE_SITE AS SRC_DBNAME,
                   R.DEST_QUEUE AS DST_QUEUE_NAME, R.TOTAL_MSGS,
                   {ts('R.LAST_RECEIVED')} AS LAST_RECEIVED_MSG_TIME
            FROM SLUICE_PROPAGATION_RECEIVERS R""",
    ]
# ---- end of Streams propagation -----------------------------------------------------------


# -- the process host (wave 2, issue 13 section 3) ----------------------------------------
def hosting_ddl(d: Dialect) -> list[str]:
    """Which host runs which Streams process (:mod:`sluice.streams.host`): a row per
    process a host holds the lease of, written when it takes it and deleted when it lets
    it go (a host killed leaves its rows until another host takes the processes over or
    finds them stopped).  V$STREAMS_HOSTED shows them (a Sluice view: Oracle runs its
    Streams processes inside the instance)."""
    i, r = d.int_type, d.real_type
    return [
        f"""CREATE TABLE IF NOT EXISTS SLUICE_STREAMS_HOSTED (
            PROCESS_TYPE TEXT NOT NULL, PROCESS_NAME TEXT NOT NULL,
            HOST_NAME TEXT NOT NULL, OS_PID {i} NOT NULL, HOST_ID TEXT NOT NULL,
            STATE TEXT NOT NULL, STARTUP_TIME {r} NOT NULL, RESTARTS {i} NOT NULL DEFAULT 0,
            ERROR_MESSAGE TEXT, PRIMARY KEY (PROCESS_TYPE, PROCESS_NAME))""",
        f"""{d.create_view} V$STREAMS_HOSTED AS
            SELECT PROCESS_TYPE, PROCESS_NAME, HOST_NAME, OS_PID, HOST_ID, STATE,
                   {d.epoch_to_timestamp('STARTUP_TIME')} AS STARTUP_TIME, RESTARTS, ERROR_MESSAGE
            FROM SLUICE_STREAMS_HOSTED""",
    ]


# SQLite: the writer's session as SQL triggers see it (a synchronous capture's,
# sluice.streams.capture.syncsqlite): a row a writer keeps for the length of its transaction
# (Sluice's sessions do, for their DML) holding its Streams tag and transaction id
SYNC_SESSION_DDL = """CREATE TABLE IF NOT EXISTS SLUICE_SYNC_SESSION (
    TXN TEXT NOT NULL DEFAULT (lower(hex(randomblob(8)))), TAG BLOB)"""


# ---- Streams apply (sluice.streams.apply) -------------------------------------------------
def apply_ddl(d: Dialect) -> list[str]:
    """Apply processes (:mod:`sluice.streams.apply`): the error queue (``SLUICE_APPLY_ERROR``,
    whole transactions with their messages), the applied low-watermark as the store last saw
    it (``SLUICE_APPLY_PROGRESS``; the authoritative one is in the target, written with the
    changes), and the per-table settings DBMS_APPLY_ADM keeps in ``SLUICE_CATALOG``.  Views:
    DBA_APPLY_ERROR, DBA_APPLY_PROGRESS, DBA_APPLY_KEY_COLUMNS,
    DBA_APPLY_INSTANTIATED_OBJECTS, DBA_APPLY_INSTANTIATED_SCHEMAS,
    DBA_APPLY_CONFLICT_COLUMNS, DBA_APPLY_DML_HANDLERS, DBA_APPLY_SPILL_TXN (the spilled
    LCRs of a large transaction, ``SLUICE_APPLY_SPILL``); what a running apply process shows
    (``SLUICE_APPLY_STATE``): V$STREAMS_APPLY_READER, _COORDINATOR, _SERVER."""
    i, r = d.int_type, d.real_type
    ts = d.epoch_to_timestamp

    def spec(key: str) -> str:
        return d.json_text("SPEC", key)
    return [
        f"""CREATE TABLE IF NOT EXISTS SLUICE_APPLY_ERROR (
            LOCAL_TRANSACTION_ID TEXT PRIMARY KEY, APPLY_NAME TEXT NOT NULL,
            QUEUE_OWNER TEXT NOT NULL, QUEUE_NAME TEXT NOT NULL, SOURCE_DATABASE TEXT,
            SOURCE_TRANSACTION_ID TEXT, SOURCE_COMMIT_SCN {i}, MESSAGE_NUMBER {i},
            ERROR_NUMBER {i}, ERROR_MESSAGE TEXT, MESSAGE_COUNT {i}, ERROR_CREATION_TIME {r},
            KIND TEXT NOT NULL, IDENT TEXT, TARGET TEXT, APPLY_TAG TEXT, MESSAGES TEXT NOT NULL)""",
        # the transactions DELETE_ERROR took out of the error queue, kept (by the same store
        # transaction) until no replay of a Spark micro-batch can bring them back: a replay
        # skips them as it skips those still in the error queue (streams.apply.errorqueue)
        f"""CREATE TABLE IF NOT EXISTS SLUICE_APPLY_ERROR_DELETED (
            APPLY_NAME TEXT NOT NULL, SOURCE_DATABASE TEXT, SOURCE_COMMIT_SCN {i}, IDENT TEXT,
            DELETED_TIME {r} NOT NULL)""",
        """CREATE INDEX IF NOT EXISTS SLUICE_APPLY_ERROR_DELETED$APPLY
            ON SLUICE_APPLY_ERROR_DELETED (APPLY_NAME, DELETED_TIME)""",
        f"""CREATE TABLE IF NOT EXISTS SLUICE_APPLY_PROGRESS (
            APPLY_NAME TEXT NOT NULL, SOURCE_DATABASE TEXT NOT NULL, APPLIED_MESSAGE_NUMBER {i},
            SOURCE_TRANSACTION_ID TEXT, APPLY_TIME {r}, APPLIED_MESSAGE_CREATE_TIME {r},
            PRIMARY KEY (APPLY_NAME, SOURCE_DATABASE))""",
        f"""{d.create_view} DBA_APPLY_ERROR AS
            SELECT APPLY_NAME, QUEUE_NAME, QUEUE_OWNER, LOCAL_TRANSACTION_ID, SOURCE_DATABASE,
                   SOURCE_TRANSACTION_ID, SOURCE_COMMIT_SCN, MESSAGE_NUMBER, ERROR_NUMBER,
                   ERROR_MESSAGE, CAST(NULL AS {i}) AS RECIPIENT_ID, APPLY_NAME AS RECIPIENT_NAME,
                   MESSAGE_COUNT, {ts('ERROR_CREATION_TIME')} AS ERROR_CREATION_TIME
            FROM SLUICE_APPLY_ERROR""",
        f"""{d.create_view} DBA_APPLY_PROGRESS AS
            SELECT APPLY_NAME, SOURCE_DATABASE, APPLIED_MESSAGE_NUMBER,
                   {ts('APPLIED_MESSAGE_CREATE_TIME')} AS APPLIED_MESSAGE_CREATE_TIME,
                   {ts('APPLY_TIME')} AS APPLY_TIME, APPLIED_MESSAGE_NUMBER AS OLDEST_MESSAGE_NUMBER,
                   SOURCE_TRANSACTION_ID AS OLDEST_TRANSACTION_ID
            FROM SLUICE_APPLY_PROGRESS""",
        f"""{d.create_view} DBA_APPLY_KEY_COLUMNS AS
            SELECT OWNER AS OBJECT_OWNER, {spec('object_name')} AS OBJECT_NAME,
                   {spec('column_name')} AS COLUMN_NAME, {spec('apply_database_link')} AS APPLY_DATABASE_LINK
            FROM SLUICE_CATALOG WHERE KIND = 'APPLY_KEY_COLUMN'""",
        f"""{d.create_view} DBA_APPLY_INSTANTIATED_OBJECTS AS
            SELECT OWNER AS SOURCE_DATABASE, {spec('source_object_owner')} AS SOURCE_OBJECT_OWNER,
                   {spec('source_object_name')} AS SOURCE_OBJECT_NAME, 'TABLE' AS SOURCE_OBJECT_TYPE,
                   CAST({spec('instantiation_scn')} AS {i}) AS INSTANTIATION_SCN,
                   CAST(NULL AS {i}) AS IGNORE_SCN, {spec('apply_database_link')} AS APPLY_DATABASE_LINK
            FROM SLUICE_CATALOG WHERE KIND = 'APPLY_INSTANTIATION' AND {spec('object_type')} = 'TABLE'""",
        f"""{d.create_view} DBA_APPLY_INSTANTIATED_SCHEMAS AS
            SELECT OWNER AS SOURCE_DATABASE, {spec('source_object_owner')} AS SOURCE_SCHEMA,
                   CAST({spec('instantiation_scn')} AS {i}) AS INSTANTIATION_SCN,
                   {spec('apply_database_link')} AS APPLY_DATABASE_LINK
            FROM SLUICE_CATALOG WHERE KIND = 'APPLY_INSTANTIATION' AND {spec('object_type')} = 'SCHEMA'""",
        f"""{d.create_view} DBA_APPLY_CONFLICT_COLUMNS AS
            SELECT OWNER AS OBJECT_OWNER, {spec('object_name')} AS OBJECT_NAME,
                   {spec('method_name')} AS METHOD_NAME, {spec('resolution_column')} AS RESOLUTION_COLUMN,
                   {spec('column_name')} AS COLUMN_NAME, {spec('apply_database_link')} AS APPLY_DATABASE_LINK
            FROM SLUICE_CATALOG WHERE KIND = 'APPLY_CONFLICT_COLUMN'""",
        f"""{d.create_view} DBA_APPLY_DML_HANDLERS AS
            SELECT OWNER AS OBJECT_OWNER, {spec('object_name')} AS OBJECT_NAME,
                   {spec('object_type')} AS OBJECT_TYPE, {spec('operation_name')} AS OPERATION_NAME,
                   {spec('user_procedure')} AS USER_PROCEDURE,
                   CASE WHEN CAST({spec('error_handler')} AS TEXT) IN ('1', 'true') THEN 'Y' ELSE 'N' END
                       AS ERROR_HANDLER,
                   {spec('apply_database_link')} AS APPLY_DATABASE_LINK, {spec('apply_name')} AS APPLY_NAME
            FROM SLUICE_CATALOG WHERE KIND = 'APPLY_DML_HANDLER'""",
        # txn_lcr_spill_threshold: the LCRs of the large transaction an apply process is
        # reading, out of memory and out of its queue (:mod:`sluice.streams.apply.spill`)
        f"""CREATE TABLE IF NOT EXISTS SLUICE_APPLY_SPILL (
            APPLY_NAME TEXT NOT NULL, SEQ {i} NOT NULL, SOURCE_DATABASE TEXT,
            SOURCE_TRANSACTION_ID TEXT, SOURCE_COMMIT_SCN {i}, MESSAGE_SCN {i}, EXECUTE {i} NOT NULL,
            MESSAGE_CREATE_TIME {r}, SPILL_TIME {r}, MESSAGE TEXT NOT NULL, PRIMARY KEY (APPLY_NAME, SEQ))""",
        f"""{d.create_view} DBA_APPLY_SPILL_TXN AS
            SELECT APPLY_NAME, SOURCE_DATABASE, SOURCE_TRANSACTION_ID AS XIDSQN,
                   MIN(MESSAGE_SCN) AS FIRST_SCN, COUNT(*) AS MESSAGE_COUNT,
                   {ts('MIN(MESSAGE_CREATE_TIME)')} AS FIRST_MESSAGE_CREATE_TIME,
                   {ts('MIN(SPILL_TIME)')} AS SPILL_CREATION_TIME
            FROM SLUICE_APPLY_SPILL GROUP BY APPLY_NAME, SOURCE_DATABASE, SOURCE_TRANSACTION_ID""",
        # what a running apply process shows: one row per process, written with each batch
        f"""CREATE TABLE IF NOT EXISTS SLUICE_APPLY_STATE (
            APPLY_NAME TEXT PRIMARY KEY, STATE TEXT, STARTUP_TIME {r}, PARALLELISM {i},
            TOTAL_MESSAGES_DEQUEUED {i} NOT NULL DEFAULT 0, TOTAL_RECEIVED {i} NOT NULL DEFAULT 0,
            TOTAL_APPLIED {i} NOT NULL DEFAULT 0, TOTAL_ERRORS {i} NOT NULL DEFAULT 0,
            TOTAL_MESSAGES_APPLIED {i} NOT NULL DEFAULT 0, DEQUEUE_TIME {r},
            DEQUEUED_MESSAGE_NUMBER {i}, HWM_MESSAGE_NUMBER {i}, HWM_TIME {r}, APPLY_TIME {r})""",
        # combined capture and apply: the capture that sends straight to a queue here
        # (sluice.streams.capture.combined), shown as the apply reader's PROXY_SID
        """CREATE TABLE IF NOT EXISTS SLUICE_APPLY_PROXY (
            QUEUE_OWNER TEXT NOT NULL, QUEUE_NAME TEXT NOT NULL, PROXY_SID TEXT NOT NULL,
            PRIMARY KEY (QUEUE_OWNER, QUEUE_NAME))""",
        f"""{d.create_view} V$STREAMS_APPLY_READER AS
            SELECT APPLY_NAME, CASE WHEN STATE = 'IDLE' THEN 'DEQUEUE MESSAGES' ELSE STATE END AS STATE,
                   TOTAL_MESSAGES_DEQUEUED, {ts('DEQUEUE_TIME')} AS DEQUEUE_TIME,
                   DEQUEUED_MESSAGE_NUMBER, {ts('STARTUP_TIME')} AS STARTUP_TIME,
                   (SELECT X.PROXY_SID FROM SLUICE_APPLY_PROXY X JOIN DBA_APPLY A
                      ON A.QUEUE_OWNER = X.QUEUE_OWNER AND A.QUEUE_NAME = X.QUEUE_NAME
                    WHERE A.APPLY_NAME = SLUICE_APPLY_STATE.APPLY_NAME) AS PROXY_SID
            FROM SLUICE_APPLY_STATE WHERE STATE IS NOT NULL""",
        f"""{d.create_view} V$STREAMS_APPLY_COORDINATOR AS
            SELECT APPLY_NAME, STATE, TOTAL_RECEIVED, TOTAL_APPLIED, TOTAL_ERRORS,
                   HWM_MESSAGE_NUMBER, {ts('HWM_TIME')} AS HWM_TIME, {ts('STARTUP_TIME')} AS STARTUP_TIME
            FROM SLUICE_APPLY_STATE WHERE STATE IS NOT NULL""",
        f"""{d.create_view} V$STREAMS_APPLY_SERVER AS
            SELECT APPLY_NAME, 1 AS SERVER_ID,
                   CASE WHEN STATE = 'APPLYING' THEN 'EXECUTE TRANSACTION' ELSE 'IDLE' END AS STATE,
                   TOTAL_APPLIED AS TOTAL_ASSIGNED, TOTAL_MESSAGES_APPLIED,
                   {ts('APPLY_TIME')} AS APPLY_TIME, HWM_MESSAGE_NUMBER AS APPLIED_MESSAGE_NUMBER
            FROM SLUICE_APPLY_STATE WHERE STATE IS NOT NULL""",
    ]


# per-session views that depend on the current user
USER_VIEWS = [
    ("USER_QUEUES", "SELECT NAME, QUEUE_TABLE, QID, QUEUE_TYPE, MAX_RETRIES, RETRY_DELAY, "
                    "ENQUEUE_ENABLED, DEQUEUE_ENABLED, RETENTION, USER_COMMENT, NETWORK_NAME, "
                    "SHARDED, QUEUE_CATEGORY FROM DBA_QUEUES WHERE OWNER = {user}"),
    ("USER_QUEUE_TABLES", "SELECT QUEUE_TABLE, TYPE, OBJECT_TYPE, SORT_ORDER, RECIPIENTS, "
                          "MESSAGE_GROUPING, COMPATIBLE, PRIMARY_INSTANCE, SECONDARY_INSTANCE, "
                          "OWNER_INSTANCE, USER_COMMENT, SECURE FROM DBA_QUEUE_TABLES WHERE OWNER = {user}"),
    ("USER_TRANSFORMATIONS", "SELECT NAME, TRANSFORMATION_ID, FROM_TYPE, TO_TYPE, TRANSFORMATION "
                             "FROM DBA_TRANSFORMATIONS WHERE OWNER = {user}"),
    # the rules engine's objects in the user's schema (Oracle drops the owner column)
    ("USER_RULES", "SELECT RULE_NAME, RULE_CONDITION, RULE_EVALUATION_CONTEXT_OWNER, "
                   "RULE_EVALUATION_CONTEXT_NAME, RULE_ACTION_CONTEXT, RULE_COMMENT "
                   "FROM DBA_RULES WHERE RULE_OWNER = {user}"),
    ("USER_RULE_SETS", "SELECT RULE_SET_NAME, RULE_SET_EVAL_CONTEXT_OWNER, RULE_SET_EVAL_CONTEXT_NAME, "
                       "RULE_SET_COMMENT FROM DBA_RULE_SETS WHERE RULE_SET_OWNER = {user}"),
    ("USER_RULE_SET_RULES", "SELECT RULE_SET_NAME, RULE_OWNER, RULE_NAME, RULE_SET_RULE_ENABLED, "
                            "RULE_SET_RULE_EVAL_CTX_OWNER, RULE_SET_RULE_EVAL_CTX_NAME, "
                            "RULE_SET_RULE_COMMENT FROM DBA_RULE_SET_RULES WHERE RULE_SET_OWNER = {user}"),
    ("USER_EVALUATION_CONTEXTS", "SELECT EVALUATION_CONTEXT_NAME, EVALUATION_FUNCTION, "
                                 "EVALUATION_CONTEXT_COMMENT FROM DBA_EVALUATION_CONTEXTS "
                                 "WHERE EVALUATION_CONTEXT_OWNER = {user}"),
    ("USER_EVALUATION_CONTEXT_TABLES", "SELECT EVALUATION_CONTEXT_NAME, TABLE_ALIAS, TABLE_NAME "
                                       "FROM DBA_EVALUATION_CONTEXT_TABLES WHERE EVALUATION_CONTEXT_OWNER = {user}"),
    # the user's system privileges, and the object grants it owns, made or received
    ("USER_SYS_PRIVS", "SELECT GRANTEE AS USERNAME, PRIVILEGE, ADMIN_OPTION FROM DBA_SYS_PRIVS "
                       "WHERE GRANTEE = {user}"),
    ("USER_ROLE_PRIVS", "SELECT GRANTEE AS USERNAME, GRANTED_ROLE, ADMIN_OPTION, DEFAULT_ROLE "
                        "FROM DBA_ROLE_PRIVS WHERE GRANTEE IN ({user}, 'PUBLIC')"),
    ("USER_TAB_PRIVS", "SELECT GRANTEE, OWNER, TABLE_NAME, GRANTOR, PRIVILEGE, GRANTABLE, HIERARCHY, TYPE "
                       "FROM DBA_TAB_PRIVS WHERE {user} IN (GRANTEE, OWNER, GRANTOR)"),
    # the roles the session has enabled: of those granted to the user or PUBLIC, to those, …
    # (G), every one (SET ROLE ALL, the default), those named and theirs (SET ROLE r, …; NONE
    # names none) or those granted to the user or PUBLIC but the ones named and theirs (SET
    # ROLE ALL EXCEPT r, …): {role_mode} ALL / ONLY / EXCEPT, {set_roles} a query of the
    # names.  The ROLE_ views show what was granted to them, "only about roles to which the
    # user has access" (Oracle's ROLE_SYS_PRIVS), a predefined role's (ROLE_GRANTS) too
    ("SESSION_ROLES", "WITH RECURSIVE G (ROLE) AS ("
                      "SELECT NAME FROM SLUICE_CATALOG WHERE KIND = 'ROLE' AND OWNER IN ({user}, 'PUBLIC') UNION "
                      "SELECT C.NAME FROM SLUICE_CATALOG C JOIN G ON C.KIND = 'ROLE' AND C.OWNER = G.ROLE), "
                      "E (ROLE) AS (SELECT G.ROLE FROM G WHERE {role_mode} = 'ALL' "
                      "OR ({role_mode} = 'ONLY' AND G.ROLE IN ({set_roles})) "
                      "OR ({role_mode} = 'EXCEPT' AND G.ROLE NOT IN ({set_roles}) AND EXISTS (SELECT 1 "
                      "FROM SLUICE_CATALOG D WHERE D.KIND = 'ROLE' AND D.OWNER IN ({user}, 'PUBLIC') "
                      "AND D.NAME = G.ROLE)) UNION "
                      "SELECT C.NAME FROM SLUICE_CATALOG C JOIN E ON C.KIND = 'ROLE' AND C.OWNER = E.ROLE) "
                      "SELECT ROLE FROM E"),
    ("ROLE_SYS_PRIVS", "SELECT GRANTEE AS ROLE, PRIVILEGE, ADMIN_OPTION, 'NO' AS COMMON, 'NO' AS INHERITED "
                       "FROM DBA_SYS_PRIVS WHERE GRANTEE IN (SELECT ROLE FROM SESSION_ROLES)"),
    ("ROLE_TAB_PRIVS", "SELECT GRANTEE AS ROLE, OWNER, TABLE_NAME, CAST(NULL AS TEXT) AS COLUMN_NAME, PRIVILEGE, "
                       "GRANTABLE, 'NO' AS COMMON, 'NO' AS INHERITED "
                       "FROM DBA_TAB_PRIVS WHERE GRANTEE IN (SELECT ROLE FROM SESSION_ROLES)"),
    # the object grants the user made, received (itself, through a session role, as PUBLIC) or
    # owns the object of (Oracle's ALL_TAB_PRIVS; COMMON / INHERITED 'NO': no containers)
    ("ALL_TAB_PRIVS", "SELECT GRANTOR, GRANTEE, OWNER AS TABLE_SCHEMA, TABLE_NAME, PRIVILEGE, GRANTABLE, "
                      "HIERARCHY, 'NO' AS COMMON, TYPE, 'NO' AS INHERITED FROM DBA_TAB_PRIVS "
                      "WHERE {user} IN (GRANTEE, OWNER, GRANTOR) OR GRANTEE = 'PUBLIC' "
                      "OR GRANTEE IN (SELECT ROLE FROM SESSION_ROLES)"),
    # those of queues, one row per grantee and grantor (Oracle's QUEUE_PRIVILEGES: 1 / 0)
    ("QUEUE_PRIVILEGES", "SELECT GRANTEE, TABLE_SCHEMA AS OWNER, TABLE_NAME AS NAME, GRANTOR, "
                         "MAX(CASE WHEN PRIVILEGE = 'ENQUEUE' THEN 1 ELSE 0 END) AS ENQUEUE_PRIVILEGE, "
                         "MAX(CASE WHEN PRIVILEGE = 'DEQUEUE' THEN 1 ELSE 0 END) AS DEQUEUE_PRIVILEGE "
                         "FROM ALL_TAB_PRIVS WHERE TYPE = 'QUEUE' GROUP BY GRANTEE, TABLE_SCHEMA, TABLE_NAME, GRANTOR"),
    ("ROLE_ROLE_PRIVS", "SELECT GRANTEE AS ROLE, GRANTED_ROLE, ADMIN_OPTION, 'NO' AS COMMON, 'NO' AS INHERITED "
                        "FROM DBA_ROLE_PRIVS WHERE GRANTEE IN (SELECT ROLE FROM SESSION_ROLES)"),
]

# Oracle functions the seeds' queries use (SQLite registers the same as Python functions)
# The session's zone for the views of many dates (Dialect.zone_join, sessionzone): the
# sluice.time_zone setting (else PostgreSQL's TimeZone: a connection not Sluice's), and an
# offset zone (SessionZone.postgres writes '+05:30' as '<+05:30>-05:30') as an interval too.
# Called once a statement (a function in FROM): reading the setting, parsing the zone's name
# and looking it up per date made PostgreSQL's SELECT * FROM AQ$<queue_table> ~1.6x slower.
# PL/pgSQL, not SQL: a SQL function in FROM is planned again at every call.
PG_ZONE_FUNCTION = """CREATE OR REPLACE FUNCTION SLUICE_SESSION_ZONE(OUT SLUICE_ZONE TEXT, OUT SLUICE_OFFSET INTERVAL)
    LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
    DECLARE z TEXT := current_setting('sluice.time_zone', true);
    BEGIN
      SLUICE_ZONE := COALESCE(NULLIF(z, ''), current_setting('TimeZone'));
      IF z ~ '^<[+-][0-9][0-9]:[0-9][0-9]>[+-][0-9][0-9]:[0-9][0-9]$' THEN
        SLUICE_OFFSET := make_interval(hours => CAST(substr(z, 2, 3) AS INT),
                                       mins => CAST(substr(z, 2, 1) || substr(z, 6, 2) AS INT));
      END IF;
    END $$"""

PG_FUNCTIONS = [
    "CREATE OR REPLACE FUNCTION RAWTOHEX(BYTEA) RETURNS TEXT LANGUAGE SQL IMMUTABLE "
    "AS $$ SELECT upper(encode($1, 'hex')) $$",
    "CREATE OR REPLACE FUNCTION HEXTORAW(TEXT) RETURNS BYTEA LANGUAGE SQL IMMUTABLE "
    "AS $$ SELECT decode($1, 'hex') $$",
    "CREATE OR REPLACE FUNCTION NVL(ANYELEMENT, ANYELEMENT) RETURNS ANYELEMENT LANGUAGE SQL "
    "IMMUTABLE AS $$ SELECT coalesce($1, $2) $$",
    # Oracle's SUBSTR, INSTR, TO_CHAR(x), TO_DATE as the SQL translation calls them
    # (store/oraclecalls.py): Oracle's positions, '' as NULL, Oracle's errors
    """CREATE OR REPLACE FUNCTION ORACLE_SUBSTR(s TEXT, pos NUMERIC, len NUMERIC) RETURNS TEXT
       LANGUAGE plpgsql IMMUTABLE AS $$
       DECLARE p INT := trunc(pos); st INT;
       BEGIN
         st := CASE WHEN p > 0 THEN p WHEN p < 0 THEN length(s) + p + 1 ELSE 1 END;
         IF st < 1 OR st > length(s) OR trunc(len) < 1 THEN RETURN NULL; END IF;
         RETURN substr(s, st, trunc(len)::INT);
       END $$""",
    "CREATE OR REPLACE FUNCTION ORACLE_SUBSTR(s TEXT, pos NUMERIC) RETURNS TEXT LANGUAGE SQL IMMUTABLE "
    "AS $$ SELECT ORACLE_SUBSTR(s, pos, length(s)) $$",
    """CREATE OR REPLACE FUNCTION ORACLE_INSTR(s TEXT, sub TEXT, pos NUMERIC DEFAULT 1, occ NUMERIC DEFAULT 1)
       RETURNS INTEGER LANGUAGE plpgsql IMMUTABLE AS $$
       DECLARE p INT := trunc(pos); o INT := trunc(occ); n INT := length(s); m INT := length(sub);
               at INT := 0; found INT; lim INT;
       BEGIN
         IF s IS NULL OR sub IS NULL OR p IS NULL OR o IS NULL OR m = 0 OR n = 0 THEN RETURN NULL; END IF;
         IF o < 1 THEN RAISE EXCEPTION 'ORA-01428: argument ''%'' is out of range', o; END IF;
         IF p = 0 THEN RETURN 0; END IF;
         IF p > 0 THEN
           at := p - 1;
           FOR k IN 1..o LOOP
             found := strpos(substr(s, at + 1), sub);
             IF found = 0 OR at >= n THEN RETURN 0; END IF;
             at := at + found;
           END LOOP;
           RETURN at;
         END IF;
         lim := n + p + 1;
         FOR k IN 1..o LOOP
           found := 0;
           FOR j IN REVERSE least(lim, n - m + 1)..1 LOOP
             IF substr(s, j, m) = sub THEN found := j; EXIT; END IF;
           END LOOP;
           IF found = 0 THEN RETURN 0; END IF;
           lim := found - 1;
         END LOOP;
         RETURN found;
       END $$""",
    # TO_CHAR of a number: Oracle's text of it (no trailing zeros, '.5'); of a date Oracle's
    # default NLS_DATE_FORMAT
    "CREATE OR REPLACE FUNCTION ORACLE_TO_CHAR(n NUMERIC) RETURNS TEXT LANGUAGE SQL IMMUTABLE AS $$ "
    "SELECT regexp_replace(CASE WHEN n = trunc(n) THEN trunc(n)::TEXT ELSE rtrim(n::TEXT, '0') END, "
    "'^(-?)0[.]', '\\1.') $$",
    "CREATE OR REPLACE FUNCTION ORACLE_TO_CHAR(d TIMESTAMP) RETURNS TEXT LANGUAGE SQL IMMUTABLE "
    "AS $$ SELECT upper(to_char(d, 'DD-MON-YY')) $$",
    "CREATE OR REPLACE FUNCTION ORACLE_TO_CHAR(t TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE AS $$ SELECT t $$",
    # TO_DATE keeps the time of day (PostgreSQL's to_date drops it); text PostgreSQL reads
    # as a field out of range is the error of the first field out of range, as Oracle's
    r"""CREATE OR REPLACE FUNCTION ORACLE_TO_DATE(t TEXT, fmt TEXT DEFAULT 'YYYY-MM-DD HH24:MI:SS') RETURNS TIMESTAMP
       LANGUAGE plpgsql STABLE AS $$
       DECLARE field TEXT; code TEXT; most INT;
       BEGIN
         RETURN date_trunc('second', to_timestamp(t, fmt)::TIMESTAMP);
       EXCEPTION WHEN datetime_field_overflow THEN
         FOREACH field IN ARRAY ARRAY['MM', 'DD', 'HH24', 'MI', 'SS'] LOOP
           most := CASE field WHEN 'MM' THEN 12 WHEN 'DD' THEN 31 WHEN 'HH24' THEN 23 ELSE 59 END;
           IF position(field IN upper(fmt)) > 0 AND EXISTS (
                SELECT 1 FROM (SELECT (regexp_match(t, '^' || regexp_replace(regexp_replace(
                  upper(fmt), field, '(\d+)'), '(YYYY|MM|DD|HH24|MI|SS)', '\d+', 'g')))[1]::INT AS v) x
                WHERE v > most OR v < CASE WHEN field IN ('MM', 'DD') THEN 1 ELSE 0 END) THEN
             code := CASE field WHEN 'MM' THEN '01843: not a valid month'
                     WHEN 'DD' THEN '01847: day of month must be between 1 and last day of month'
                     WHEN 'HH24' THEN '01850: hour must be between 0 and 23'
                     WHEN 'MI' THEN '01851: minutes must be between 0 and 59'
                     ELSE '01852: seconds must be between 0 and 59' END;
             RAISE EXCEPTION 'ORA-%', code;
           END IF;
         END LOOP;
         RAISE EXCEPTION 'ORA-01847: day of month must be between 1 and last day of month';
       WHEN invalid_datetime_format THEN
         RAISE EXCEPTION 'ORA-01861: literal does not match format string';
       END $$""",
    # Oracle's JSON_VALUE: the scalar at a path as text; NULL for objects, arrays, bad JSON
    """CREATE OR REPLACE FUNCTION JSON_VALUE(doc TEXT, path TEXT) RETURNS TEXT LANGUAGE plpgsql
       IMMUTABLE AS $$
       DECLARE v JSONB;
       BEGIN
         v := jsonb_path_query_first(doc::jsonb, path::jsonpath);
         IF v IS NULL OR jsonb_typeof(v) IN ('object', 'array', 'null') THEN RETURN NULL; END IF;
         RETURN v #>> '{}';
       EXCEPTION WHEN others THEN RETURN NULL;
       END $$""",
]


# PostgreSQL: what the USER_VIEWS read of the session (set by pgconn / PgSession.set_roles)
PG_SESSION_SETTINGS = {
    "user": "current_setting('sluice.user', true)",
    "role_mode": "COALESCE(NULLIF(current_setting('sluice.role_mode', true), ''), 'ALL')",
    "set_roles": "SELECT jsonb_array_elements_text(COALESCE(NULLIF(current_setting('sluice.set_roles', true), ''), "
                 "'[]')::jsonb)",
}


def _sqlite_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def user_view_ddl(user_literal: str, only: str | None = None, role_mode: str = "ALL",
                  set_roles: tuple[str, ...] = ()) -> list[str]:
    """SQLite: the USER_ views of one connection (``only``: that one), as TEMP views for
    ``user_literal``, with the session's SET ROLE (``role_mode`` ALL / ONLY / EXCEPT, the
    roles named)."""
    names = " UNION ALL ".join(f"SELECT {_sqlite_literal(r)}" for r in set_roles) or "SELECT NULL WHERE 0 = 1"
    values = {"user": user_literal, "role_mode": _sqlite_literal(role_mode), "set_roles": names}
    return [f"CREATE TEMP VIEW {name} AS " + body.format(**values) for name, body in USER_VIEWS
            if only in (None, name)]


# ---- monitoring (sluice.monitor, issue 17) ---------------------------------------------
# One view over every queue table: how many records of each queue are in each state, per
# consumer and remote address, with their oldest enqueue time — what V$AQ, the buffered
# views and a monitoring snapshot count, in one statement however many queue tables there
# are.  A queue table is a table of its own, so the view is rebuilt whenever one is created
# or dropped (queue_depth_ddl, called by sqlcatalog and on opening a store).
QUEUE_DEPTH_VIEW = "SLUICE_QUEUE_DEPTH"
# SQLite refuses a compound SELECT of more than 500 parts: nest the union in groups
_UNION_GROUP = 200


def _queue_depth_select(qt: QueueTableInfo | None, d: Dialect) -> str:
    """The view's rows for one queue table (``None``: the typed empty row set).  MSGS counts
    records (a multi-consumer message has one per recipient), MESSAGES the messages: each
    message of a (queue, state) counts once, in the row of its first record (lowest SEQ) in
    that state — summed over consumers it is what V$AQ shows (Oracle counts messages);
    MSG_SUM_ENQ_TIME likewise sums their enqueue times once per message."""
    i, r = d.int_type, d.real_type
    if qt is None:
        return (f"SELECT CAST(NULL AS {i}) AS QT_ID, CAST(NULL AS TEXT) AS OWNER, "
                f"CAST(NULL AS TEXT) AS QUEUE_NAME, CAST(NULL AS TEXT) AS CONSUMER_NAME, "
                f"CAST(NULL AS TEXT) AS ADDRESS, CAST(NULL AS {i}) AS STATE, "
                f"CAST(NULL AS {i}) AS DELIVERY_MODE, CAST(NULL AS {i}) AS MSGS, "
                f"CAST(NULL AS {r}) AS OLDEST_ENQ_TIME, CAST(NULL AS {r}) AS SUM_ENQ_TIME, "
                f"CAST(NULL AS {i}) AS MESSAGES, CAST(NULL AS {r}) AS MSG_SUM_ENQ_TIME WHERE 1 = 0")
    owner = "'" + qt.owner.replace("'", "''") + "'"
    source, first = table_name(qt), "1"
    if qt.multiple_consumers:   # a record per recipient: the first of each message counts it
        source = (f"(SELECT Q_NAME, CONSUMER_NAME, ADDRESS, STATE, DELIVERY_MODE, ENQ_TIME, "
                  f"CASE WHEN SEQ = MIN(SEQ) OVER (PARTITION BY Q_NAME, MSGID, STATE) THEN 1 ELSE 0 END "
                  f"AS FIRST_RECORD FROM {table_name(qt)} WHERE STATE <> 2) R")
        first = "FIRST_RECORD"
    # PROCESSED records (kept for retention) are history, not depth: left out
    return (f"SELECT CAST({qt.qt_id} AS {i}) AS QT_ID, CAST({owner} AS TEXT) AS OWNER, "
            f"Q_NAME AS QUEUE_NAME, CONSUMER_NAME, ADDRESS, CAST(STATE AS {i}) AS STATE, "
            f"CAST(DELIVERY_MODE AS {i}) AS DELIVERY_MODE, CAST(COUNT(*) AS {i}) AS MSGS, "
            f"CAST(MIN(ENQ_TIME) AS {r}) AS OLDEST_ENQ_TIME, CAST(SUM(ENQ_TIME) AS {r}) AS SUM_ENQ_TIME, "
            f"CAST(SUM({first}) AS {i}) AS MESSAGES, "
            f"CAST(SUM({first} * ENQ_TIME) AS {r}) AS MSG_SUM_ENQ_TIME "
            f"FROM {source} WHERE STATE <> 2 "
            f"GROUP BY Q_NAME, CONSUMER_NAME, ADDRESS, STATE, DELIVERY_MODE")


def queue_depth_ddl(tables: list[QueueTableInfo], d: Dialect) -> list[str]:
    """Statements (re)creating SLUICE_QUEUE_DEPTH over ``tables`` (columns QT_ID, OWNER,
    QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, DELIVERY_MODE, MSGS, OLDEST_ENQ_TIME,
    SUM_ENQ_TIME, MESSAGES, MSG_SUM_ENQ_TIME).  Views built on it (V$AQ …) stay valid: its
    columns change only with the schema version (new ones at the end: PostgreSQL's CREATE OR
    REPLACE VIEW adds them)."""
    parts = [_queue_depth_select(qt, d) for qt in tables] or [_queue_depth_select(None, d)]
    groups = [" UNION ALL ".join(parts[k:k + _UNION_GROUP]) for k in range(0, len(parts), _UNION_GROUP)]
    body = groups[0] if len(groups) == 1 else " UNION ALL ".join(f"SELECT * FROM ({g}) G{n}"
                                                                    for n, g in enumerate(groups))
    if d.name == "postgresql":
        return [f"CREATE OR REPLACE VIEW {QUEUE_DEPTH_VIEW} AS {body}"]
    return [f"DROP VIEW IF EXISTS {QUEUE_DEPTH_VIEW}", f"CREATE VIEW {QUEUE_DEPTH_VIEW} AS {body}"]


def _subscriber(d: Dialect, key: str) -> str:
    return d.json_text("S.SPEC", key)


def _subscriber_columns(d: Dialect) -> str:
    """The AQ$<queue_table>_S / DBA_QUEUE_SUBSCRIBERS columns of a SUBSCRIBER row ``S``."""
    i = d.int_type
    return (f"{_subscriber(d, 'name')} AS NAME, {_subscriber(d, 'address')} AS ADDRESS, "
            f"CAST({_subscriber(d, 'protocol')} AS {i}) AS PROTOCOL, "
            f"{_subscriber(d, 'transformation')} AS TRANSFORMATION, "
            f"CASE WHEN CAST({_subscriber(d, 'queue_to_queue')} AS TEXT) IN ('1', 'true') "
            f"THEN 'TRUE' ELSE 'FALSE' END AS QUEUE_TO_QUEUE, "
            f"CASE CAST({_subscriber(d, 'delivery_mode')} AS {i}) WHEN 2 THEN 'BUFFERED' "
            f"WHEN 3 THEN 'PERSISTENT_OR_BUFFERED' ELSE 'PERSISTENT' END AS DELIVERY_MODE")


def monitoring_ddl(d: Dialect) -> list[str]:
    """The queue monitoring views (seed 003 "Monitoring"; Oracle's columns): V$AQ (and GV$AQ
    of the one instance) over SLUICE_QUEUE_DEPTH, DBA_QUEUE_SUBSCRIBERS over the SUBSCRIBER
    catalog rows, V$BUFFERED_QUEUES / V$BUFFERED_SUBSCRIBERS over the spilled buffered
    messages (a query through a session adds its process's in-memory ones, sqlmemory)."""
    i, r = d.int_type, d.real_type
    now = now_epoch(d)
    return [
        # Oracle's V$AQ counts messages: a multi-consumer message once, whatever its number
        # of recipients (MESSAGES); TOTAL_WAIT / AVERAGE_WAIT: seconds the READY messages
        # have waited (seed 003)
        f"""{d.create_view} V$AQ AS
            SELECT Q.QID,
                   CAST(COALESCE(SUM(CASE WHEN D.STATE = 1 THEN D.MESSAGES END), 0) AS {i}) AS WAITING,
                   CAST(COALESCE(SUM(CASE WHEN D.STATE = 0 THEN D.MESSAGES END), 0) AS {i}) AS READY,
                   CAST(COALESCE(SUM(CASE WHEN D.STATE = 3 THEN D.MESSAGES END), 0) AS {i}) AS EXPIRED,
                   CAST(COALESCE(SUM(CASE WHEN D.STATE = 0 THEN D.MESSAGES * {now} - D.MSG_SUM_ENQ_TIME END), 0)
                        AS {r}) AS TOTAL_WAIT,
                   CAST(COALESCE(SUM(CASE WHEN D.STATE = 0 THEN D.MESSAGES * {now} - D.MSG_SUM_ENQ_TIME END)
                        / NULLIF(SUM(CASE WHEN D.STATE = 0 THEN D.MESSAGES END), 0), 0) AS {r}) AS AVERAGE_WAIT
            FROM AQ_QUEUES Q
            LEFT JOIN {QUEUE_DEPTH_VIEW} D ON D.QT_ID = Q.QT_ID AND D.QUEUE_NAME = Q.NAME
            GROUP BY Q.QID""",
        f"""{d.create_view} GV$AQ AS SELECT 1 AS INST_ID, V.* FROM V$AQ V""",
        # the store's enqueue / dequeue totals (stats.py): a queue has a row once something
        # was enqueued into or dequeued from it, as Oracle's has after its first activity
        f"""{d.create_view} V$PERSISTENT_QUEUES AS
            SELECT Q.QID AS QUEUE_ID, Q.QT_ID AS QUEUE_TABLE_ID, Q.OWNER AS QUEUE_SCHEMA,
                   Q.NAME AS QUEUE_NAME, {d.epoch_to_timestamp('MIN(S.FIRST_ACTIVITY_TIME)')} AS FIRST_ACTIVITY_TIME,
                   CAST(SUM(S.ENQUEUED_MSGS) AS {i}) AS ENQUEUED_MSGS,
                   CAST(SUM(S.DEQUEUED_MSGS) AS {i}) AS DEQUEUED_MSGS,
                   {d.epoch_to_timestamp('MAX(S.LAST_ENQUEUE_TIME)')} AS LAST_ENQUEUE_TIME,
                   {d.epoch_to_timestamp('MAX(S.LAST_DEQUEUE_TIME)')} AS LAST_DEQUEUE_TIME
            FROM AQ_QUEUES Q JOIN {STATS_TABLE} S ON S.QID = Q.QID
            GROUP BY Q.QID, Q.QT_ID, Q.OWNER, Q.NAME""",
        f"""{d.create_view} GV$PERSISTENT_QUEUES AS SELECT 1 AS INST_ID, V.* FROM V$PERSISTENT_QUEUES V""",
        f"""{d.create_view} DBA_QUEUE_SUBSCRIBERS AS
            SELECT Q.OWNER, Q.NAME AS QUEUE_NAME, T.NAME AS QUEUE_TABLE,
                   {_subscriber(d, 'name')} AS CONSUMER_NAME, {_subscriber(d, 'address')} AS ADDRESS,
                   CAST({_subscriber(d, 'protocol')} AS {i}) AS PROTOCOL,
                   {_subscriber(d, 'transformation')} AS TRANSFORMATION, {_subscriber(d, 'rule')} AS RULE,
                   CASE CAST({_subscriber(d, 'delivery_mode')} AS {i}) WHEN 2 THEN 'BUFFERED'
                        WHEN 3 THEN 'PERSISTENT_OR_BUFFERED' ELSE 'PERSISTENT' END AS DELIVERY_MODE,
                   'NO' AS IF_NONDURABLE_SUBSCRIBER,
                   CASE WHEN CAST({_subscriber(d, 'queue_to_queue')} AS TEXT) IN ('1', 'true')
                        THEN 'TRUE' ELSE 'FALSE' END AS QUEUE_TO_QUEUE
            FROM SLUICE_CATALOG S
            JOIN AQ_QUEUES Q ON Q.OWNER || '.' || Q.NAME = S.OWNER
            JOIN AQ_QUEUE_TABLES T ON T.QT_ID = Q.QT_ID
            WHERE S.KIND = 'SUBSCRIBER'""",
        f"""{d.create_view} ALL_QUEUE_SUBSCRIBERS AS SELECT * FROM DBA_QUEUE_SUBSCRIBERS""",
        *(f"{d.create_view} {name} AS {body}" for name, body in buffered_views(
            d, BUFFERED_SPILLED, no_buffered_cumulative(d), no_buffered_subscribers(d))),
    ]


# what is buffered (IN_MEMORY 0: spilled to the queue table): the source of the buffered views
BUFFERED_SPILLED = (f"(SELECT QT_ID, OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, MSGS, "
                    f"OLDEST_ENQ_TIME, MESSAGES, 0 AS IN_MEMORY, SUM_ENQ_TIME FROM {QUEUE_DEPTH_VIEW} "
                    f"WHERE DELIVERY_MODE = 2)")
# the subscribers' columns of the buffered views that the process's pool counts (see
# no_buffered_subscribers; sqlmemory fills them), after OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS
BUFFERED_SUBSCRIBER_COUNTS = ("CNUM_MSGS", "TOTAL_DEQUEUED_MSG", "LAST_DEQUEUE_TIME", "ELAPSED_DEQUEUE_TIME",
                              "DEQUEUE_CPU_TIME", "LAST_BROWSED_SEQ", "LAST_BROWSED_NUM",
                              "LAST_DEQUEUED_SEQ", "LAST_DEQUEUED_NUM", "STARTUP_TIME", "OLDEST_MSGID")


def no_buffered_cumulative(d: Dialect) -> str:
    """The cumulative counts of the buffered views in a session of a process without
    buffered messaging (rows OWNER, QUEUE_NAME, CNUM_MSGS, CSPILL_MSGS, STARTUP_TIME): none."""
    return (f"(SELECT CAST(NULL AS TEXT) AS OWNER, CAST(NULL AS TEXT) AS QUEUE_NAME, "
            f"CAST(0 AS {d.int_type}) AS CNUM_MSGS, CAST(0 AS {d.int_type}) AS CSPILL_MSGS, "
            f"CAST(NULL AS {d.real_type}) AS STARTUP_TIME WHERE 1 = 0)")


def buffered_subscriber_types(d: Dialect) -> dict[str, str]:
    """The SQL type of each of BUFFERED_SUBSCRIBER_COUNTS."""
    i, r = d.int_type, d.real_type
    return {c: r if c in ("LAST_DEQUEUE_TIME", "STARTUP_TIME") else d.blob_type if c == "OLDEST_MSGID" else i
            for c in BUFFERED_SUBSCRIBER_COUNTS}


def no_buffered_subscribers(d: Dialect) -> str:
    """The subscribers' counts of the buffered views in a session of a process without
    buffered messaging (rows OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS and
    BUFFERED_SUBSCRIBER_COUNTS): none."""
    counts = ", ".join(f"CAST(NULL AS {t}) AS {c}" for c, t in buffered_subscriber_types(d).items())
    return (f"(SELECT CAST(NULL AS TEXT) AS OWNER, CAST(NULL AS TEXT) AS QUEUE_NAME, "
            f"CAST(NULL AS TEXT) AS CONSUMER_NAME, CAST(NULL AS TEXT) AS ADDRESS, {counts} WHERE 1 = 0)")


def buffered_views(d: Dialect, source: str, cumulative: str, subscribers: str) -> list[tuple[str, str]]:
    """(name, query) of V$BUFFERED_QUEUES and V$BUFFERED_SUBSCRIBERS over ``source`` (rows
    QT_ID, OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, MSGS, OLDEST_ENQ_TIME,
    MESSAGES, IN_MEMORY, SUM_ENQ_TIME) and ``cumulative`` (rows OWNER, QUEUE_NAME, CNUM_MSGS,
    CSPILL_MSGS, STARTUP_TIME: what the querying process enqueued and spilled since its
    buffered pool began — the pool is the process's as Oracle's is the instance's) and
    ``subscribers`` (rows OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS and
    BUFFERED_SUBSCRIBER_COUNTS: likewise, per subscriber; times in hundredths of a second,
    as Oracle's ELAPSED_DEQUEUE_TIME / DEQUEUE_CPU_TIME).  V$BUFFERED_QUEUES counts messages
    (a multi-consumer one once: MESSAGES), what is buffered now in memory or spilled
    (NUM_MSGS) and the spilled part (SPILL_MSGS); V$BUFFERED_SUBSCRIBERS a subscriber's
    records: CURRENT_ENQ_SEQ is the sequence number of its last (its CNUM_MSGS: its
    records are numbered 1, 2 … as they come), MESSAGE_LAG how many came after the one it
    last dequeued, AVG_MSG_AGE the seconds its buffered records have waited, on average."""
    i, r = d.int_type, d.real_type
    ts = d.epoch_to_timestamp
    now = now_epoch(d)

    def count(column: str) -> str:
        return f"CAST(COALESCE(MIN(C.{column}), 0) AS {i})"

    def total(where: str, column: str = "B.MSGS") -> str:
        return f"CAST(COALESCE(SUM(CASE WHEN {where} THEN {column} END), 0) AS {i})"
    return [
        ("V$BUFFERED_QUEUES", f"""
            SELECT Q.QID AS QUEUE_ID, Q.OWNER AS QUEUE_SCHEMA, Q.NAME AS QUEUE_NAME,
                   {ts(f'CAST(MIN(C.STARTUP_TIME) AS {r})')} AS STARTUP_TIME,
                   {total('B.STATE IN (0, 1)', 'B.MESSAGES')} AS NUM_MSGS,
                   {total('B.STATE IN (0, 1) AND B.IN_MEMORY = 0', 'B.MESSAGES')} AS SPILL_MSGS,
                   CAST(COALESCE(MIN(C.CNUM_MSGS), 0) AS {i}) AS CNUM_MSGS,
                   CAST(COALESCE(MIN(C.CSPILL_MSGS), 0) AS {i}) AS CSPILL_MSGS,
                   {total('B.STATE = 3', 'B.MESSAGES')} AS EXPIRED_MSGS,
                   {ts('MIN(CASE WHEN B.STATE = 0 THEN B.OLDEST_ENQ_TIME END)')} AS OLDEST_MSG_ENQTM,
                   'NORMAL' AS QUEUE_STATE
            FROM AQ_QUEUES Q LEFT JOIN {source} B ON B.QT_ID = Q.QT_ID AND B.QUEUE_NAME = Q.NAME
            LEFT JOIN {cumulative} C ON C.OWNER = Q.OWNER AND C.QUEUE_NAME = Q.NAME
            WHERE Q.QUEUE_TYPE = 'NORMAL_QUEUE'
            GROUP BY Q.QID, Q.OWNER, Q.NAME"""),
        ("V$BUFFERED_SUBSCRIBERS", f"""
            SELECT Q.QID AS QUEUE_ID, Q.OWNER AS QUEUE_SCHEMA, Q.NAME AS QUEUE_NAME,
                   {_subscriber(d, 'name')} AS SUBSCRIBER_NAME,
                   {_subscriber(d, 'address')} AS SUBSCRIBER_ADDRESS,
                   CAST({_subscriber(d, 'protocol')} AS {i}) AS PROTOCOL,
                   CASE WHEN {_subscriber(d, 'name')} IS NULL THEN 'PROXY' ELSE 'SUBSCRIBER' END
                       AS SUBSCRIBER_TYPE,
                   {ts(f'CAST(MIN(C.STARTUP_TIME) AS {r})')} AS STARTUP_TIME,
                   {count('LAST_BROWSED_SEQ')} AS LAST_BROWSED_SEQ,
                   {count('LAST_BROWSED_NUM')} AS LAST_BROWSED_NUM,
                   {count('LAST_DEQUEUED_SEQ')} AS LAST_DEQUEUED_SEQ,
                   {count('LAST_DEQUEUED_NUM')} AS LAST_DEQUEUED_NUM,
                   {count('CNUM_MSGS')} AS CURRENT_ENQ_SEQ,
                   {total('B.STATE IN (0, 1)')} AS NUM_MSGS,
                   {count('CNUM_MSGS')} AS CNUM_MSGS,
                   {count('TOTAL_DEQUEUED_MSG')} AS TOTAL_DEQUEUED_MSG,
                   {total('B.STATE IN (0, 1) AND B.IN_MEMORY = 0')} AS TOTAL_SPILLED_MSG,
                   {total('B.STATE = 3')} AS EXPIRED_MSGS,
                   CAST(COALESCE(MIN(C.CNUM_MSGS) - MIN(C.LAST_DEQUEUED_SEQ), 0) AS {i}) AS MESSAGE_LAG,
                   {count('ELAPSED_DEQUEUE_TIME')} AS ELAPSED_DEQUEUE_TIME,
                   {count('DEQUEUE_CPU_TIME')} AS DEQUEUE_CPU_TIME,
                   CAST(COALESCE(SUM(CASE WHEN B.STATE IN (0, 1) THEN B.MSGS * {now} - B.SUM_ENQ_TIME END)
                        / NULLIF(SUM(CASE WHEN B.STATE IN (0, 1) THEN B.MSGS END), 0), 0) AS {r}) AS AVG_MSG_AGE,
                   {ts(f'CAST(MIN(C.LAST_DEQUEUE_TIME) AS {r})')} AS LAST_DEQUEUE_TIME,
                   C.OLDEST_MSGID,
                   {ts('MIN(CASE WHEN B.STATE = 0 THEN B.OLDEST_ENQ_TIME END)')} AS OLDEST_MSG_ENQTM
            FROM SLUICE_CATALOG S
            JOIN AQ_QUEUES Q ON Q.OWNER || '.' || Q.NAME = S.OWNER
            LEFT JOIN {source} B ON B.QT_ID = Q.QT_ID AND B.QUEUE_NAME = Q.NAME
                 AND COALESCE(B.CONSUMER_NAME, '') = COALESCE({_subscriber(d, 'name')}, '')
                 AND COALESCE(B.ADDRESS, '') = COALESCE({_subscriber(d, 'address')}, '')
            LEFT JOIN {subscribers} C ON C.OWNER = Q.OWNER AND C.QUEUE_NAME = Q.NAME
                 AND COALESCE(C.CONSUMER_NAME, '') = COALESCE({_subscriber(d, 'name')}, '')
                 AND COALESCE(C.ADDRESS, '') = COALESCE({_subscriber(d, 'address')}, '')
            WHERE S.KIND = 'SUBSCRIBER'
            GROUP BY Q.QID, Q.OWNER, Q.NAME, S.SPEC, C.OLDEST_MSGID"""),
    ]


def subscriber_views_ddl(qt: QueueTableInfo, d: Dialect) -> list[str]:
    """AQ$<queue_table>_S (every subscriber of the table's queues) and AQ$<queue_table>_R
    (those with a rule) of a multi-consumer queue table (seed 003 "Queue Subscribers")."""
    if not qt.multiple_consumers:
        return []
    owner = "'" + qt.owner.replace("'", "''") + "'"
    base = (f"FROM SLUICE_CATALOG S JOIN AQ_QUEUES Q ON Q.OWNER || '.' || Q.NAME = S.OWNER "
            f"WHERE S.KIND = 'SUBSCRIBER' AND Q.QT_ID = {qt.qt_id} AND Q.OWNER = {owner}")
    create = "CREATE OR REPLACE VIEW" if d.name == "postgresql" else "CREATE VIEW IF NOT EXISTS"
    return [
        f"{create} {subscriber_view_name(qt, 'S')} AS SELECT Q.NAME AS QUEUE, "
        f"{_subscriber_columns(d)} {base}",
        f"{create} {subscriber_view_name(qt, 'R')} AS SELECT Q.NAME AS QUEUE, "
        f"{_subscriber(d, 'name')} AS NAME, {_subscriber(d, 'address')} AS ADDRESS, "
        f"CAST({_subscriber(d, 'protocol')} AS {d.int_type}) AS PROTOCOL, {_subscriber(d, 'rule')} AS RULE, "
        f"CAST(NULL AS TEXT) AS RULE_SET, {_subscriber(d, 'transformation')} AS TRANSFORMATION "
        f"{base} AND {_subscriber(d, 'rule')} IS NOT NULL",
    ]


def subscriber_view_name(qt: QueueTableInfo, kind: str) -> str:
    """Physical (quoted) name of ``AQ$<queue_table>_S`` (``kind`` S) or ``_R``."""
    return quote(physical(f"{qt.owner}.AQ${qt.name}_{kind}"))


def now_epoch(d: Dialect) -> str:
    """SQL for the current time as POSIX seconds."""
    if d.name == "postgresql":
        return "EXTRACT(EPOCH FROM statement_timestamp())"   # one value in a statement
    return "((julianday('now') - 2440587.5) * 86400.0)"
# ---- end of monitoring ------------------------------------------------------------------


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# PostgreSQL truncates identifiers at 63 bytes; longer Oracle names (up to 128
# characters) keep a readable prefix and a digest, on every backend alike
_MAX_IDENT = 63


def physical(name: str) -> str:
    """The database identifier (unquoted) for the Oracle-style name ``name``."""
    if len(name.encode()) <= _MAX_IDENT:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:16]
    head = name.encode()[:_MAX_IDENT - 17].decode(errors="ignore")
    return f"{head}#{digest}"


_TABLE_NAMES: dict[tuple[str, str], str] = {}


def table_name(qt: QueueTableInfo) -> str:
    """Physical (quoted) name of the queue table's message storage."""
    key = (qt.owner, qt.name)
    name = _TABLE_NAMES.get(key)
    if name is None:
        name = _TABLE_NAMES[key] = quote(physical(f"{qt.owner}.{qt.name}"))
    return name


def view_name(qt: QueueTableInfo) -> str:
    """Physical (quoted) name of the ``AQ$<queue_table>`` view."""
    return quote(physical(f"{qt.owner}.AQ${qt.name}"))


# The message record's columns (base.RECORD_COLUMNS order) and their kinds; a dialect
# turns a kind into its type (see column_type).
MESSAGE_COLUMNS = (
    ("SEQ", "key"), ("Q_NAME", "text NOT NULL"), ("MSGID", "blob NOT NULL"), ("CORRID", "text"),
    ("PRIORITY", "int NOT NULL"), ("STATE", "int NOT NULL"), ("DELAY", "real"), ("EXPIRATION", "int"),
    ("EXPIRE_AT", "real"), ("TIME_MANAGER_INFO", "real"), ("CSCN", "int"), ("ENQ_TIME", "real NOT NULL"),
    ("ENQ_UID", "text"), ("ENQ_TID", "text"), ("DEQ_TIME", "real"), ("DEQ_UID", "text"),
    ("DEQ_TID", "text"), ("RETRY_COUNT", "int NOT NULL DEFAULT 0"), ("EXCEPTION_QSCHEMA", "text"),
    ("EXCEPTION_QUEUE", "text"), ("SENDER_NAME", "text"), ("SENDER_ADDRESS", "text"),
    ("SENDER_PROTOCOL", "int"), ("ORIGINAL_MSGID", "blob"), ("ORIGINAL_QUEUE_NAME", "text"),
    ("ORIGINAL_QUEUE_OWNER", "text"), ("EXPIRATION_REASON", "text"), ("CONSUMER_NAME", "text"),
    ("DEQ_AGENT_NAME", "text"), ("DELIVERY_MODE", "int NOT NULL DEFAULT 1"), ("USER_DATA", "payload"),
    ("ADDRESS", "text"), ("PROTOCOL", "int"), ("RECIPIENT_LIST", "text"),
)
_KINDS = {name: spec.split()[0] for name, spec in MESSAGE_COLUMNS}
assert tuple(_KINDS) == RECORD_COLUMNS


def column_type(qt: QueueTableInfo, column: str, d: Dialect) -> str:
    """The dialect's type of a message column of ``qt`` (the payload's depends on the table)."""
    kind = _KINDS[column]
    if kind == "payload":
        kind = "blob" if qt.payload_type == "RAW" else "text"
    return {"key": d.int_type, "int": d.int_type, "real": d.real_type, "blob": d.blob_type,
            "text": "TEXT"}[kind]


def queue_table_ddl(qt: QueueTableInfo, d: Dialect) -> list[str]:
    """CREATE statements for one queue table: storage, indexes, AQ$ view."""
    t = table_name(qt)
    base = f"{qt.owner}.{qt.name}"
    order = ", ".join(qt.order_columns)
    columns = ",\n            ".join(
        f"{name} {d.serial_key}" if spec == "key" else
        f"{name} {column_type(qt, name, d)}{spec[len(spec.split()[0]):]}" for name, spec in MESSAGE_COLUMNS)
    return [
        f"""CREATE TABLE {t} (
            {columns})""",
        # multi-consumer tables hold a record per consumer: a consumer's dequeue walks its own
        f"CREATE INDEX {quote(physical(base + '$ORDER'))} ON {t} "
        f"(Q_NAME, {'CONSUMER_NAME, ' if qt.multiple_consumers else ''}STATE, {order})",
        f"CREATE INDEX {quote(physical(base + '$MSGID'))} ON {t} (MSGID)",
        *remote_index_ddl(qt),
        *expired_index_ddl(qt),
        *group_index_ddl(qt),
        f"CREATE INDEX {quote(physical(base + '$TM'))} ON {t} (TIME_MANAGER_INFO) "
        f"WHERE TIME_MANAGER_INFO IS NOT NULL",
        f"CREATE INDEX {quote(physical(base + '$CORR'))} ON {t} (Q_NAME, CORRID) WHERE CORRID IS NOT NULL",
        f"CREATE VIEW {view_name(qt)} AS {aq_view_select(qt, d, t)}",
        *subscriber_views_ddl(qt, d),
    ]


def aq_view_select(qt: QueueTableInfo, d: Dialect, source: str, in_memory: bool = False) -> str:
    """The ``AQ$<queue_table>`` view's query over ``source`` (the queue table, or with
    ``in_memory`` a union that adds this process's buffered messages with an ``IN_MEMORY``
    column of 1, shown as IN-MEMORY, seed 003 "Enqueuing Buffered Messages")."""
    def ts(x: str) -> str:          # (the session's zone read once: FROM … zone_join)
        return d.epoch_to_timestamp(x, joined=True)
    memory_state = "WHEN IN_MEMORY = 1 THEN 'IN-MEMORY' " if in_memory else ""
    return f"""SELECT
            Q_NAME AS QUEUE, {d.hex('MSGID')} AS MSG_ID, CORRID AS CORR_ID,
            PRIORITY AS MSG_PRIORITY,
            CASE {memory_state}WHEN DELIVERY_MODE = 2 AND STATE = 0 THEN 'SPILLED'
                 WHEN STATE = 0 THEN 'READY' WHEN STATE = 1 THEN 'WAITING'
                 WHEN STATE = 2 THEN 'PROCESSED' WHEN STATE = 3 THEN 'EXPIRED'
                 WHEN STATE = {STATE_UNDELIVERABLE} THEN 'UNDELIVERABLE' END AS MSG_STATE,
            {ts('DELAY')} AS DELAY, {ts('DELAY')} AS DELAY_TIMESTAMP,
            EXPIRATION, {ts('ENQ_TIME')} AS ENQ_TIME, {ts('ENQ_TIME')} AS ENQ_TIMESTAMP,
            ENQ_UID AS ENQ_USER_ID, ENQ_TID AS ENQ_TXN_ID,
            {ts('DEQ_TIME')} AS DEQ_TIME, {ts('DEQ_TIME')} AS DEQ_TIMESTAMP,
            DEQ_UID AS DEQ_USER_ID, DEQ_TID AS DEQ_TXN_ID, RETRY_COUNT,
            EXCEPTION_QSCHEMA AS EXCEPTION_QUEUE_OWNER, EXCEPTION_QUEUE,
            USER_DATA, SENDER_NAME, SENDER_ADDRESS, SENDER_PROTOCOL,
            {d.hex('ORIGINAL_MSGID')} AS ORIGINAL_MSGID, ORIGINAL_QUEUE_NAME, ORIGINAL_QUEUE_OWNER,
            EXPIRATION_REASON, CONSUMER_NAME, DEQ_AGENT_NAME AS DEQUEUE_AGENT,
            ADDRESS, PROTOCOL,
            CASE DELIVERY_MODE WHEN 2 THEN 'BUFFERED' ELSE 'PERSISTENT' END AS DELIVERY_MODE,
            CASE {memory_state}WHEN DELIVERY_MODE = 2 THEN 'SPILLED' ELSE NULL END AS MSG_MEMORY_STATE,
            CSCN, SEQ AS LOCAL_ORDER_NO
            FROM {source}{d.zone_join}"""


def remote_index_ddl(qt: QueueTableInfo) -> list[str]:
    """Multi-consumer tables: the records of remote recipients, in dequeue order, which a
    propagation walks (``Selector.remote``) — few beside the consumers' own records."""
    if not qt.multiple_consumers:
        return []
    return [f"CREATE INDEX IF NOT EXISTS {quote(physical(f'{qt.owner}.{qt.name}$REMOTE'))} ON {table_name(qt)} "
            f"(Q_NAME, STATE, {', '.join(qt.order_columns)}) WHERE ADDRESS IS NOT NULL"]


def expired_index_ddl(qt: QueueTableInfo) -> list[str]:
    """Multi-consumer tables: the message ids of the records out of retries (STATE 3,
    MSG_EXPIRED), which a dequeue's commit probes for every message it took
    (``sqlops.settle_failed``).  Almost always empty; without it PostgreSQL answered that probe
    by walking $ORDER through every consumer's backlog (80-230 ms per commit at a 500k
    backlog, bench/RESULTS.md)."""
    if not qt.multiple_consumers:
        return []
    return [f"CREATE INDEX IF NOT EXISTS {quote(physical(f'{qt.owner}.{qt.name}$EXPIRED'))} ON {table_name(qt)} "
            f"(MSGID) WHERE STATE = {MSG_EXPIRED}"]


def group_index_ddl(qt: QueueTableInfo) -> list[str]:
    """TRANSACTIONAL tables: each message group (``ENQ_TID``) in dequeue order, which a
    dequeue in the group a session is in (NEXT_MSG) reads from its position: the group's
    next message, or that there is none (ORA-25235), found in the group's own entries.
    Through $ORDER it read every message between, and at the group's end the whole backlog
    behind it (19 ms CPU on SQLite, 57 ms on PostgreSQL at a 50k backlog)."""
    if qt.message_grouping != "TRANSACTIONAL":
        return []
    return [f"CREATE INDEX IF NOT EXISTS {quote(physical(f'{qt.owner}.{qt.name}$GROUP'))} ON {table_name(qt)} "
            f"(Q_NAME, {'CONSUMER_NAME, ' if qt.multiple_consumers else ''}ENQ_TID, STATE, "
            f"{', '.join(qt.order_columns)})"]


def upgrade_queue_table_ddl(qt: QueueTableInfo, columns: set[str], d: Dialect) -> list[str]:
    """Statements bringing a queue table created by an older Sluice to SCHEMA_VERSION
    (``columns``: the upper-case column names it has)."""
    t = table_name(qt)
    base = f"{qt.owner}.{qt.name}"
    stmts = [f"ALTER TABLE {t} ADD COLUMN {name} {column_type(qt, name, d)}"
             for name in ("ADDRESS", "PROTOCOL", "RECIPIENT_LIST") if name not in columns]
    if stmts:
        order = ", ".join(qt.order_columns)
        stmts += [f"CREATE INDEX IF NOT EXISTS {quote(physical(base + '$MSGID'))} ON {t} (MSGID)",
                  f"DROP INDEX IF EXISTS {quote(physical(base + '$ORDER'))}",
                  f"CREATE INDEX {quote(physical(base + '$ORDER'))} ON {t} "
                  f"(Q_NAME, {'CONSUMER_NAME, ' if qt.multiple_consumers else ''}STATE, {order})",
                  f"DROP VIEW IF EXISTS {view_name(qt)}",
                  f"CREATE VIEW {view_name(qt)} AS {aq_view_select(qt, d, t)}"]   # the new columns
    elif d.name == "postgresql":   # same columns, a newer text (16): views of the user's may read it
        stmts = [f"CREATE OR REPLACE VIEW {view_name(qt)} AS {aq_view_select(qt, d, t)}"]
    else:                          # SQLite binds a view's names when it is read: nothing depends on it
        stmts = [f"DROP VIEW IF EXISTS {view_name(qt)}", f"CREATE VIEW {view_name(qt)} AS {aq_view_select(qt, d, t)}"]
    # schema version 5 (propagation), 8 (monitoring), 14 ($EXPIRED), 23 ($GROUP)
    return stmts + remote_index_ddl(qt) + expired_index_ddl(qt) + group_index_ddl(qt) + \
        subscriber_views_ddl(qt, d)


def drop_queue_table_ddl(qt: QueueTableInfo) -> list[str]:
    return [f"DROP VIEW IF EXISTS {view_name(qt)}", f"DROP VIEW IF EXISTS {subscriber_view_name(qt, 'S')}",
            f"DROP VIEW IF EXISTS {subscriber_view_name(qt, 'R')}", f"DROP TABLE IF EXISTS {table_name(qt)}"]
