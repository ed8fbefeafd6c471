"""The one error tree, and every ORA code Sluice raises, in one place.

The classes follow the DB-API / python-oracledb hierarchy so that code written
for ``oracledb`` catches the same things::

    Error
     ├── InterfaceError            misuse of the Python API (closed connection …)
     └── DatabaseError             everything the "database" refuses (ORA-NNNNN)
          ├── DataError            a value does not fit (type, length, range)
          ├── OperationalError     timeouts, unreachable store, locks
          ├── IntegrityError       duplicates, dangling references
          ├── ProgrammingError     unknown objects, bad statements, bad options
          └── NotSupportedError    a feature Sluice does not offer

An error is raised with :func:`ora`::

    raise ora(24010, "SCOTT.ORDERS_Q")

``str(e)`` starts with ``ORA-24010: …``; ``e.code`` is ``24010``, ``e.full_code``
is ``"ORA-24010"`` and, as in python-oracledb, ``e.args[0]`` is an object with
``code``, ``full_code`` and ``message``.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, replace
from functools import lru_cache


class Error(Exception):
    """Root of every exception Sluice raises on purpose."""

    code: int = 0
    full_code: str = ""

    def __init__(self, message: str, code: int = 0, prefix: str = "ORA") -> None:
        # python-oracledb's own errors have four digits (DPY-1001), Oracle's five (ORA-01017)
        full_code = f"{prefix}-{code:0{4 if prefix == 'DPY' else 5}d}" if code else ""
        detail = _ErrorDetail(code=code, full_code=full_code, message=message)
        super().__init__(detail)
        self.code = code
        self.full_code = full_code
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class _ErrorDetail:
    """What python-oracledb code reads from ``e.args[0]``."""

    code: int
    full_code: str
    message: str
    offset: int = 0   # executemany(): the row that failed (python-oracledb's _Error.offset)

    def __str__(self) -> str:
        return self.message


def add_error_line(exc: Error, line: str) -> Error:
    """``exc`` with ``line`` added to its message, as Oracle adds an ``ORA-06512: at …`` line
    to the error stack for each PL/SQL unit an exception leaves: the same object (a handler
    further out still knows its exception), its ``args[0]`` told too."""
    exc.message = f"{exc.message}\n{line}"
    if exc.args and isinstance(exc.args[0], _ErrorDetail):
        exc.args = (replace(exc.args[0], message=exc.message), *exc.args[1:])
    return exc


class InterfaceError(Error):
    """The Python API was used wrongly (closed connection, wrong argument type)."""


class DatabaseError(Error):
    """The store refused an operation; ``str()`` starts with the ORA code."""


class DataError(DatabaseError):
    """A value does not fit: type, length, range (ORA-25209, ORA-00932 …)."""


class OperationalError(DatabaseError):
    """Timeouts, an unreachable or restarting store, locks (ORA-25228, ORA-12541 …)."""


class IntegrityError(DatabaseError):
    """Duplicates and dangling references (ORA-24006, ORA-25232 …)."""


class ProgrammingError(DatabaseError):
    """Unknown objects, bad statements, bad options (ORA-24010, ORA-00904 …)."""


class NotSupportedError(DatabaseError):
    """A feature Sluice does not offer (SLU-00001, see :func:`not_supported`)."""


class ArgumentError(ProgrammingError, TypeError):
    """A call named an argument python-oracledb does not know either, or gave one of a kind
    python-oracledb refuses with ``TypeError`` (enqone of what is no MessageProperties …):
    a ``TypeError`` there, so ``except TypeError`` keeps working; a ``sluice.Error`` here."""


# code -> (class, message template).  Templates use str.format with positional
# arguments; the wording follows Oracle's message catalogue.
_CATALOG: dict[int, tuple[type[DatabaseError], str]] = {
    # general SQL / PL/SQL
    900: (ProgrammingError, "invalid SQL statement: {0}"),
    904: (ProgrammingError, "{0}: invalid identifier"),
    942: (ProgrammingError, "table or view does not exist"),
    955: (IntegrityError, "name is already used by an existing object"),
    972: (ProgrammingError, "identifier is too long: {0}"),
    # sequences (store/seqspec.py, store/sequences.py)
    2277: (ProgrammingError, "invalid sequence name"),
    2283: (ProgrammingError, "cannot alter starting sequence number"),
    2286: (ProgrammingError, "no options specified for ALTER SEQUENCE"),
    2287: (ProgrammingError, "sequence number not allowed here"),
    2289: (ProgrammingError, "sequence does not exist"),
    2205: (ProgrammingError, "only SELECT and ALTER privileges are valid for sequences"),
    2224: (ProgrammingError, "EXECUTE privileges not allowed for tables"),
    4001: (ProgrammingError, "sequence parameter {0} must be an integer"),
    4002: (ProgrammingError, "INCREMENT must be a non-zero integer"),
    4003: (ProgrammingError, "sequence parameter {0} exceeds maximum size allowed ({1} digits)"),
    4004: (ProgrammingError, "MINVALUE must be less than MAXVALUE"),
    4005: (ProgrammingError, "INCREMENT must be less than MAXVALUE minus MINVALUE"),
    4006: (ProgrammingError, "START WITH cannot be less than MINVALUE"),
    4007: (ProgrammingError, "MINVALUE cannot be made to exceed the current value"),
    4008: (ProgrammingError, "START WITH cannot be more than MAXVALUE"),
    4009: (ProgrammingError, "MAXVALUE cannot be made to be less than the current value"),
    4010: (ProgrammingError, "the number of values to CACHE must be greater than 1"),
    4013: (ProgrammingError, "number to CACHE must be less than one cycle"),
    4014: (ProgrammingError, "descending sequences that CYCLE must specify MINVALUE"),
    4015: (ProgrammingError, "ascending sequences that CYCLE must specify MAXVALUE"),
    8002: (DatabaseError, "sequence {0}.CURRVAL is not yet defined in this session"),
    8004: (DatabaseError, "sequence {0}.NEXTVAL {1} and cannot be instantiated"),
    1031: (ProgrammingError, "insufficient privileges"),
    1722: (DataError, "invalid number: {0}"),
    # text that is no JSON written to a JSON column (Oracle 21c's JSON type)
    40441: (DatabaseError, "JSON syntax error"),
    1760: (ProgrammingError, "illegal argument for function"),
    # regular expressions (REGEXP_LIKE …: store/oraclefns.py)
    30001: (DataError, "trim set should have only one character"),
    12722: (DataError, "regular expression internal error"),
    12725: (DataError, "unmatched parentheses in regular expression"),
    12726: (DataError, "unmatched bracket in regular expression"),
    12727: (DataError, "invalid back reference in regular expression"),
    12728: (DataError, "invalid range in regular expression"),
    12729: (DataError, "invalid character class in regular expression"),
    12732: (DataError, "invalid interval value in regular expression"),
    2303: (ProgrammingError, "cannot drop or replace a type with type or table dependents"),
    4043: (ProgrammingError, "object {0} does not exist"),
    # stored procedures and functions (sluice.plsql.units, sluice.storedunits)
    4050: (ProgrammingError, "invalid or missing procedure, function, or package name"),
    6503: (DatabaseError, "PL/SQL: Function returned without value"),
    6576: (ProgrammingError, "not a valid function or procedure name"),
    6500: (DatabaseError, "PL/SQL: storage error"),
    6502: (DataError, "PL/SQL: numeric or value error: {0}"),
    6550: (ProgrammingError, "line {0}, column {1}:\n{2}"),
    # PL/SQL run-time conditions (the statement interpreter, sluice.plsql)
    1008: (ProgrammingError, "not all variables bound"),
    1403: (DatabaseError, "no data found"),
    1422: (DatabaseError, "exact fetch returns more than requested number of rows ({0})"),
    1476: (DataError, "divisor is equal to zero"),
    1436: (DatabaseError, "CONNECT BY loop in user data"),
    30930: (ProgrammingError, "NOCYCLE keyword is required with CONNECT_BY_ISCYCLE pseudo-column"),
    1821: (DataError, "date format not recognized"),
    1830: (DataError, "date format picture ends before converting entire input string"),
    1839: (DataError, "date not valid for month specified"),
    1841: (DataError, "(full) year must be between -4713 and +9999, and not be 0"),
    1843: (DataError, "not a valid month"),
    1846: (DataError, "not a valid day of the week"),
    1847: (DataError, "day of month must be between 1 and last day of month"),
    1850: (DataError, "hour must be between 0 and 23"),
    1851: (DataError, "minutes must be between 0 and 59"),
    1852: (DataError, "seconds must be between 0 and 59"),
    1855: (DataError, "AM/A.M. or PM/P.M. required"),
    1861: (DataError, "literal does not match format string"),
    30076: (ProgrammingError, "invalid extract field for extract source"),
    # ALTER SESSION SET TIME_ZONE (store/sessionzone.py)
    1874: (DataError, "time zone hour must be between -15 and 15"),
    1875: (DataError, "time zone minute must be between -59 and 59"),
    1882: (DataError, "timezone region not found"),
    2248: (ProgrammingError, "invalid option for ALTER SESSION"),
    # ALTER SESSION SET NLS_… (store/sessionnls.py)
    12705: (DatabaseError, "Cannot access NLS data files or invalid environment specified"),
    96: (DatabaseError, "invalid value {0} for parameter {1}, must be from among {2}"),
    2003: (ProgrammingError, "invalid USERENV parameter"),      # SYS_CONTEXT (store/instanceviews.py)
    1899: (DataError, "bad precision specifier"),
    6513: (DatabaseError, "PL/SQL: index for PL/SQL table out of range for host language array"),
    # PL/SQL cursors (plsql/cursors.py)
    1001: (DatabaseError, "invalid cursor"),
    6511: (DatabaseError, "PL/SQL: cursor already open"),
    1002: (DatabaseError, "fetch out of sequence"),
    1410: (DatabaseError, "invalid ROWID"),
    6504: (DatabaseError, "PL/SQL: Return types of Result Set variables or query do not match"),
    6510: (ProgrammingError, "PL/SQL: unhandled user-defined exception"),
    24381: (DatabaseError, "error(s) in array DML"),     # FORALL … SAVE EXCEPTIONS
    6530: (ProgrammingError, "Reference to uninitialized composite"),
    6531: (ProgrammingError, "Reference to uninitialized collection"),
    6533: (DataError, "Subscript beyond count"),
    21000: (ProgrammingError, "error number argument to raise_application_error of {0} is out of range"),
    # object types and their values (sluice.objtypes)
    902: (ProgrammingError, "invalid datatype: {0}"),
    957: (ProgrammingError, "duplicate column name: {0}"),
    1426: (DataError, "numeric overflow: {0}"),
    1438: (DataError, "value larger than specified precision allowed for this column"),
    6532: (DataError, "Subscript outside of limit"),
    12899: (DataError, "value too large for column {0} (actual: {1}, maximum: {2})"),
    22160: (DataError, "element at index [{0}] does not exist"),
    22164: (ProgrammingError, "delete element operation is not allowed for variable-length array"),
    22165: (DataError, "given index [{0}] must be in the range of [{1}] to [{2}]"),
    22167: (DataError, "given trim size [{0}] must be less than or equal to [{1}]"),
    # rule condition language (sluice.rules): syntax, then evaluation
    905: (ProgrammingError, "missing keyword"),
    909: (ProgrammingError, "invalid number of arguments"),
    906: (ProgrammingError, "missing left parenthesis"),
    907: (ProgrammingError, "missing right parenthesis"),
    908: (ProgrammingError, "missing NULL keyword"),
    911: (ProgrammingError, "invalid character"),
    920: (ProgrammingError, "invalid relational operator"),
    923: (ProgrammingError, "FROM keyword not found where expected"),
    928: (ProgrammingError, "missing SELECT keyword"),
    932: (ProgrammingError, "inconsistent datatypes: expected {0} got {1}"),
    933: (ProgrammingError, "SQL command not properly ended"),
    22289: (DatabaseError, "cannot perform operation on an unopened file or LOB"),
    22293: (DatabaseError, "LOB already opened in the same transaction"),
    22926: (DatabaseError, "specified trim length is greater than current LOB value's length"),
    913: (ProgrammingError, "too many values"),
    925: (ProgrammingError, "missing INTO keyword"),
    947: (ProgrammingError, "not enough values"),
    936: (ProgrammingError, "missing expression"),
    1489: (DatabaseError, "result of string concatenation is too long"),
    30487: (ProgrammingError, "ORDER BY not allowed here"),
    56902: (ProgrammingError, "expect aggregate function inside pivot operation"),
    938: (ProgrammingError, "not enough arguments for function"),
    939: (ProgrammingError, "too many arguments for function"),
    975: (ProgrammingError, "date + date not allowed"),
    1424: (DataError, "missing or illegal character following the escape character"),
    1425: (DataError, "escape character must be character string of length 1"),
    1428: (DataError, "argument '{0}' is out of range"),
    1465: (DataError, "invalid hex number"),
    1481: (DataError, "invalid number format model"),
    1700: (ProgrammingError, "duplicate username in list"),
    1711: (ProgrammingError, "duplicate privilege listed"),
    1740: (ProgrammingError, "missing double quote in identifier"),
    1741: (ProgrammingError, "illegal zero-length identifier"),
    1742: (ProgrammingError, "comment not properly terminated"),
    1756: (ProgrammingError, "quoted string not properly terminated"),
    # users, privileges, agents (sluice.security)
    990: (ProgrammingError, "missing or invalid privilege: {0}"),
    969: (ProgrammingError, "missing ON keyword"),
    993: (ProgrammingError, "missing GRANT keyword"),   # WITH ADMIN OPTION on an object privilege
    1017: (ProgrammingError, "invalid username/password; logon denied"),
    1045: (ProgrammingError, "user {0} lacks CREATE SESSION privilege; logon denied"),
    922: (ProgrammingError, "missing or invalid option: {0}"),
    1922: (ProgrammingError, "CASCADE must be specified to drop '{0}'"),
    1940: (ProgrammingError, "cannot drop a user that is currently connected: {0}"),
    1917: (ProgrammingError, "user or role '{0}' does not exist"),
    1918: (ProgrammingError, "user '{0}' does not exist"),
    1920: (IntegrityError, "user name '{0}' conflicts with another user or role name"),
    1919: (ProgrammingError, "role '{0}' does not exist"),
    1921: (IntegrityError, "role name '{0}' conflicts with another user or role name"),
    1926: (ProgrammingError, "cannot GRANT to a role WITH GRANT OPTION"),
    1934: (ProgrammingError, "circular role grant detected"),
    1932: (ProgrammingError, "ADMIN option not granted for role '{0}'"),
    1924: (ProgrammingError, "role '{0}' not granted or does not exist"),
    1927: (ProgrammingError, "cannot REVOKE privileges you did not grant"),
    1749: (ProgrammingError, "you may not GRANT/REVOKE privileges to/from yourself"),
    1952: (ProgrammingError, "system privileges not granted to '{0}'"),
    1951: (ProgrammingError, "ROLE '{0}' not granted to '{1}'"),
    28008: (ProgrammingError, "invalid old password"),
    28009: (ProgrammingError, "connection as SYS should be as SYSDBA or SYSOPER"),
    24088: (ProgrammingError, "AQ Agent {0} does not exist"),
    24089: (IntegrityError, "AQ Agent {0} already exists"),
    24093: (ProgrammingError, "AQ agent {0} not granted privileges of database user {1}"),
    24095: (ProgrammingError, "AQ agent {0} is not mapped to database user {1}"),
    25224: (ProgrammingError, "sender name must be specified for enqueue into secure queues"),
    # the database server (PostgreSQL backend): reachability, lost connections, lock waits
    54: (OperationalError, "resource busy and acquire with NOWAIT specified or timeout expired"),
    60: (OperationalError, "deadlock detected while waiting for resource"),
    # SELECT … FOR UPDATE WAIT n (store/forupdate.py)
    30005: (ProgrammingError, "missing or invalid WAIT interval"),
    30006: (OperationalError, "resource busy; acquire with WAIT timeout expired"),
    # DML on the store's database (StoreSession.execute_dml): constraint violations
    1: (IntegrityError, "unique constraint ({0}) violated"),
    1400: (IntegrityError, "cannot insert NULL into ({0})"),
    1407: (IntegrityError, "cannot update ({0}) to NULL"),
    2290: (IntegrityError, "check constraint ({0}) violated"),
    2291: (IntegrityError, "integrity constraint ({0}) violated - parent key not found"),
    2292: (IntegrityError, "integrity constraint ({0}) violated - child record found"),
    # MERGE (store/sqlmerge.py): a target row two source rows update, an ON column SET
    30926: (DatabaseError, "unable to get a stable set of rows in the source tables"),
    38104: (ProgrammingError, "Columns referenced in the ON Clause cannot be updated: {0}"),
    38101: (ProgrammingError, "Invalid column in the INSERT VALUES Clause: {0}"),
    38102: (ProgrammingError, "Invalid column in the INSERT WHERE Clause: {0}"),
    926: (ProgrammingError, "missing VALUES keyword"),
    969: (ProgrammingError, "missing ON keyword"),
    # a COMMIT refused (a deferred constraint): the cause follows on the next line, as in
    # Oracle's error stack
    2091: (IntegrityError, "transaction rolled back"),
    20: (OperationalError, "maximum number of processes ({0}) exceeded"),
    1013: (OperationalError, "user requested cancel of current operation"),
    1086: (ProgrammingError, "savepoint '{0}' never established in this session or is invalid"),
    1033: (OperationalError, "ORACLE initialization or shutdown in progress"),
    3113: (OperationalError, "end-of-file on communication channel"),
    12514: (OperationalError, "TNS:listener does not currently know of service requested in "
                              "connect descriptor: {0}"),
    12541: (OperationalError, "TNS:no listener: {0}"),
    12542: (OperationalError, "TNS:address already in use: {0}"),
    12545: (OperationalError, "Connect failed because target host or object does not exist: {0}"),
    12154: (DatabaseError, "TNS:could not resolve the connect identifier specified: {0}"),
    29024: (OperationalError, "Certificate validation failure: {0}"),
    # the embedded store's file (SQLite backend): opening it, a full disk, a failing device
    1114: (OperationalError, "IO error writing block to file {0} ({1})"),
    1115: (OperationalError, "IO error reading block from file {0} ({1})"),
    1157: (OperationalError, "cannot identify/lock data file {0} - {1}"),
    27041: (OperationalError, "unable to open file {0}: {1}"),
    # AQ administration
    24001: (IntegrityError, "cannot create QUEUE_TABLE, {0} already exists"),
    24002: (ProgrammingError, "QUEUE_TABLE {0} does not exist"),
    24006: (IntegrityError, "cannot create QUEUE, {0} already exists"),
    24010: (ProgrammingError, "QUEUE {0} does not exist"),
    24011: (ProgrammingError, "cannot drop QUEUE, {0} should be stopped first"),
    24012: (ProgrammingError, "cannot drop QUEUE_TABLE, some queues in {0} have not been dropped"),
    24013: (DataError, "invalid value {0}, MAX_RETRIES should be non-negative"),
    24014: (DataError, "invalid value {0}, RETENTION_TIME should be FOREVER or non-negative"),
    24017: (ProgrammingError, "cannot enable enqueue on QUEUE, {0} is an exception queue"),
    24020: (ProgrammingError, "internal error in DBMS_AQ_IMPORT_INTERNAL, {0}"),
    24019: (ProgrammingError, "identifier for {0} too long, should not be greater than {1} characters"),
    24039: (ProgrammingError, "Queue {0} not created in queue table for multiple consumers"),
    24033: (ProgrammingError, "no recipients for message"),
    24034: (IntegrityError, "application {0} is already a subscriber for queue {1}"),
    24035: (ProgrammingError, "AQ agent {0} is not a subscriber for queue {1}"),
    24047: (ProgrammingError, "invalid agent name {0}, agent name should be of the form NAME[@ADDRESS]"),
    24036: (DataError, "invalid SORT_ORDER column {0} specified for queue table"),
    24037: (DataError, "schema {0} in QUEUE_NAME is not same as schema {1} in QUEUE_TABLE"),
    24042: (ProgrammingError, "no propagation schedule exists for QUEUE {0} and DESTINATION {1}"),
    24087: (DataError, "invalid database user {0}"),
    24181: (ProgrammingError, "The type {0} does not exist"),
    # sharded queues / Transactional Event Queues (sluice.aq.sharded)
    24205: (NotSupportedError, "feature {0} not supported for sharded queues"),
    24216: (ProgrammingError, "{0} not a supported payload type in sharded queue"),
    24228: (NotSupportedError, "purge by condition not supported for sharded queues/transactional event queues."),
    24184: (IntegrityError, "transformation {0}.{1} already exists"),
    24185: (ProgrammingError, "transformation {0}.{1} not found"),
    # AQ enqueue / dequeue
    25205: (ProgrammingError, "the QUEUE {0} does not exist"),
    25207: (OperationalError, "enqueue failed, queue {0} is disabled from enqueueing"),
    25208: (DataError, "invalid value {0}, DELAY should be non-negative"),
    25209: (DataError, "invalid value {0}, EXPIRATION should be non-negative or NEVER"),
    25215: (DataError, "user_data type and queue type do not match: {0}"),
    25216: (ProgrammingError, "invalid recipient, either NAME or ADDRESS must be specified"),
    25232: (IntegrityError, "duplicate recipients specified for message"),
    25226: (OperationalError, "dequeue failed, queue {0} is not enabled for dequeue"),
    25228: (OperationalError, "timeout or end-of-fetch during message dequeue from {0}"),
    25229: (DataError, "error on transformation of message by {0}.{1}: {2}"),
    25231: (ProgrammingError, "cannot dequeue because CONSUMER_NAME not specified"),
    25235: (OperationalError, "fetched all messages in current transaction from {0}"),
    25236: (ProgrammingError, "buffered enqueue or dequeue cannot be used with visibility ON_COMMIT"),
    25241: (ProgrammingError, "Cannot change correlation ID from {0} to {1} without FIRST_MESSAGE option"),
    25242: (ProgrammingError, "Cannot change subscriber name from {0} to {1} without FIRST_MESSAGE option"),
    24950: (ProgrammingError, "unregister failed, registration {0} not found"),
    24971: (ProgrammingError, "invalid callback location {0}: use plsql://, mailto:// or http://"),
    25254: (OperationalError, "time-out in LISTEN while waiting for a message"),
    25307: (OperationalError, "Enqueue rate too high, flow control enabled"),
    25263: (ProgrammingError, "no message in queue {0} with message ID {1}"),
    25293: (ProgrammingError, "Lob attributes must be null for buffered operations"),
    25297: (ProgrammingError, "Enqueue of buffered message failed, attempted to enqueue buffered message with {0}"),
    # IDAP, the AQ servlet (sluice.idap) and its proxy sessions
    600: (DatabaseError, "internal error code, arguments: [{0}]"),
    19202: (ProgrammingError, "Error occurred in XML processing\n{0}"),
    31011: (DataError, "XML parsing failed\n{0}"),
    31154: (DataError, "invalid XML document\n{0}"),
    24418: (OperationalError, "Cannot open further sessions"),
    24413: (ProgrammingError, "Invalid number of sessions specified"),
    28150: (ProgrammingError, "proxy not authorized to connect as client {0}"),
    # rules engine: DBMS_RULE_ADM / DBMS_RULE (sluice.rules), ANYDATA, LCRs
    918: (ProgrammingError, "column ambiguously defined"),
    22626: (DataError, "Type Mismatch while constructing or accessing OCIAnyData"),
    24141: (ProgrammingError, "rule set {0}.{1} does not exist"),
    24145: (IntegrityError, "evaluation context {0}.{1} already exists"),
    24146: (IntegrityError, "rule {0}.{1} already exists"),
    24147: (ProgrammingError, "rule {0}.{1} does not exist"),
    24148: (IntegrityError, "cannot drop rule {0}.{1} with dependents"),
    24150: (ProgrammingError, "evaluation context {0}.{1} does not exist"),
    24151: (ProgrammingError, "no evaluation context is associated with rule {0}.{1} or rule set {2}.{3}"),
    24152: (IntegrityError, "cannot drop evaluation context {0}.{1} with dependents"),
    24153: (IntegrityError, "rule set {0}.{1} already exists"),
    24154: (IntegrityError, "rule {0}.{1} already in rule set {2}.{3}"),
    24155: (ProgrammingError, "rule {0}.{1} not in rule set {2}.{3}"),
    24156: (ProgrammingError, "duplicate table alias {0}"),
    24157: (ProgrammingError, "duplicate variable name {0}"),
    24160: (IntegrityError, "name {0} already exists in the name value pair list"),
    24161: (ProgrammingError, "name {0} does not exist in the name value pair list"),
    24172: (ProgrammingError, "rule set {0}.{1} has errors"),
    25448: (ProgrammingError, "rule {0}.{1} has errors"),
    25457: (OperationalError, "evaluation function {0} returns failure"),
    # DBMS_RULE.EVALUATE's values that do not fit the evaluation context
    25436: (ProgrammingError, "invalid table alias: {0}"),                      # a table value's
    25437: (ProgrammingError, "duplicate table value for table alias: {0}"),
    25438: (ProgrammingError, "invalid variable name: {0}"),                    # a variable value's
    25439: (ProgrammingError, "duplicate variable value for variable: {0}"),
    25440: (ProgrammingError, "invalid table alias: {0}"),                      # a column value's
    25449: (ProgrammingError, "invalid variable name: {0}"),                    # an attribute value's
    25463: (ProgrammingError, "table alias not specified"),                     # a table value's
    25464: (ProgrammingError, "ROWID not specified for table alias: {0}"),
    25465: (ProgrammingError, "variable name not specified"),
    25467: (ProgrammingError, "table alias not specified"),                     # a column value's
    25473: (ProgrammingError, "cannot store {0} in rule action context"),
    # Streams capture processes (sluice.streams.capture)
    1291: (OperationalError, "missing logfile: {0}"),
    1325: (ProgrammingError, "archive log mode must be enabled to build into the logstream: {0}"),
    26665: (IntegrityError, "STREAMS process {0} already exists"),
    26666: (OperationalError, "cannot alter STREAMS process {0}{1}"),
    26667: (ProgrammingError, "invalid STREAMS parameter {0}"),
    26668: (ProgrammingError, "STREAMS process {0} exists{1}"),
    26701: (ProgrammingError, "STREAMS process {0} does not exist"),
    # database links and propagation (sluice.streams.propagation)
    2011: (IntegrityError, "duplicate database link name"),
    2019: (ProgrammingError, "connection description for remote database not found"),
    2024: (ProgrammingError, "database link not found"),
    23600: (IntegrityError, "cannot create PROPAGATION, {0} already exists"),
    23601: (ProgrammingError, "PROPAGATION_NAME {0} does not exist"),
    23605: (ProgrammingError, "invalid value \"{0}\" for STREAMS parameter {1}"),
    24041: (IntegrityError, "propagation schedule exists for QUEUE {0} and DESTINATION {1}"),
    24064: (OperationalError, "propagation for QUEUE {0} and DESTINATION {1} already enabled"),
    24065: (OperationalError, "propagation for QUEUE {0} and DESTINATION {1} already disabled"),
    26744: (OperationalError, "STREAMS capture process {0} does not support {1} because of the "
                              "following reason: {2}"),
    # DBMS_STREAMS_ADM rule generation, apply processes (sluice.streams.rulegen, .apply)
    1435: (ProgrammingError, "user does not exist: {0}"),
    # apply processes: applying, conflicts, the error queue (sluice.streams.apply)
    26687: (ProgrammingError, "no instantiation SCN provided for {0} in source database {1}"),
    26688: (ProgrammingError, "missing key in LCR: {0}"),
    26714: (DatabaseError, "User error encountered while applying: {0}"),
    26786: (DatabaseError, "A row with key {0} exists but has conflicting column(s) {1} in table {2}"),
    26787: (DatabaseError, "The row with key {0} does not exist in table {1}"),
    26788: (ProgrammingError, "The column {0} does not exist in the table {1}"),
    26693: (ProgrammingError, "invalid conflict handler: {0}"),
    26673: (ProgrammingError, "invalid apply error: {0}"),
    # local directories a pipeline writes or reads (UTL_FILE's codes: sluice.pipeline.paths)
    29280: (ProgrammingError, "invalid directory path: {0}"),
    29283: (OperationalError, "invalid file operation: {0}"),
    # table DDL typed at a cursor (sluice.store.tableddl)
    903: (ProgrammingError, "invalid table name"),
    998: (ProgrammingError, "must name this expression with a column alias"),
    1418: (ProgrammingError, "specified index does not exist"),
    1430: (ProgrammingError, "column being added already exists in table"),
    1439: (ProgrammingError, "column to be modified must be empty to change datatype"),
    1442: (ProgrammingError, "column to be modified to NOT NULL is already NOT NULL"),
    1451: (ProgrammingError, "column to be modified to NULL cannot be modified to NULL"),
    1727: (ProgrammingError, "numeric precision specifier is out of range (1 to 38)"),
    1728: (ProgrammingError, "numeric scale specifier is out of range (-84 to 127)"),
    1758: (ProgrammingError, "table must be empty to add mandatory (NOT NULL) column"),
    910: (ProgrammingError, "specified length too long for its datatype"),
    1452: (IntegrityError, "cannot CREATE UNIQUE INDEX; duplicate keys found"),
    1730: (ProgrammingError, "invalid number of column names specified"),
    1735: (ProgrammingError, "invalid ALTER TABLE option: {0}"),
    1773: (ProgrammingError, "may not specify column datatypes in this CREATE TABLE"),
    1780: (ProgrammingError, "string literal required"),
    12983: (ProgrammingError, "cannot drop all columns in a table"),
    14047: (ProgrammingError, "ALTER TABLE|INDEX RENAME may not be combined with other operations"),
    30675: (ProgrammingError, "identity column must be a numeric type"),
    32795: (IntegrityError, "cannot insert into a generated always identity column"),
    32796: (IntegrityError, "cannot update a generated always identity column"),
    2260: (ProgrammingError, "table can have only one primary key"),
    2296: (IntegrityError, "cannot enable ({0}) - null values found"),
    2266: (IntegrityError, "unique/primary keys in table referenced by enabled foreign keys"),
    2449: (IntegrityError, "unique/primary keys in table referenced by foreign keys"),
    # ALTER TABLE ADD / DROP CONSTRAINT (store/constraintddl.py)
    2437: (IntegrityError, "cannot validate ({0}) - primary key violated"),
    2299: (IntegrityError, "cannot validate ({0}) - duplicate keys found"),
    2293: (IntegrityError, "cannot validate ({0}) - check constraint violated"),
    2298: (IntegrityError, "cannot validate ({0}) - parent keys not found"),
    2443: (ProgrammingError, "Cannot drop constraint  - nonexistent constraint"),
    2264: (ProgrammingError, "name already used by an existing constraint"),
    2273: (IntegrityError, "this unique/primary key is referenced by some foreign keys"),
    2270: (ProgrammingError, "no matching unique or primary key for this column-list"),
    1449: (IntegrityError, "column contains NULL values; cannot alter to NOT NULL"),
    2441: (ProgrammingError, "Cannot drop nonexistent primary key"),
    2256: (ProgrammingError, "number of referencing columns must match referenced columns"),
    2268: (ProgrammingError, "referenced table does not have a primary key"),
    24005: (ProgrammingError, "Inappropriate utilities used to perform DDL on AQ table {0}"),
    # views and global temporary tables typed at a cursor (sluice.store.viewddl, .temptables)
    1402: (IntegrityError, "view WITH CHECK OPTION where-clause violation"),
    1732: (ProgrammingError, "data manipulation operation not legal on this view"),
    4063: (DatabaseError, "{0} has errors"),
    # stored packages (plsql/packages.py): a body missing, a session's state discarded
    4067: (DatabaseError, "not executed, {0} does not exist"),
    4068: (DatabaseError, "existing state of packages has been discarded"),
    42399: (ProgrammingError, "cannot perform a DML operation on a read-only view"),
}


def ora(code: int, *args: object) -> DatabaseError:
    """Build the exception for ORA-``code`` with the catalogue's message."""
    cls, template = _CATALOG[code]
    return cls(f"ORA-{code:05d}: {_format(template, args)}", code)


def rolled_back(cause: DatabaseError) -> IntegrityError:
    """ORA-02091: a COMMIT refused for a deferred constraint ``cause`` violates, the
    transaction rolled back; the message is Oracle's error stack (the cause on its next line)."""
    return IntegrityError(f"{ora(2091).message}\n{cause.message}", 2091)


def places(code: int) -> int:
    """How many details ORA-``code``'s catalogue text has places for (``{0}``, ``{1}`` …)."""
    return _places(_CATALOG[code][1])


@lru_cache(maxsize=None)     # (a fixed set of catalogue texts: parsed once each, not per error)
def _places(template: str) -> int:
    return len({name for _, name, _, _ in string.Formatter().parse(template) if name is not None})


def _format(template: str, args: tuple) -> str:
    if args:
        # arguments the template has no place for are details after the standard text (as
        # Oracle appends its own to ORA-03113's), in the catalogue's "text: detail" form,
        # one line (LAST_ERROR in a status table): str.format would drop them unsaid
        used = _places(template)
        return ": ".join([template.format(*args), *map(str, args[used:])])
    # no arguments: drop the placeholders and what introduces them
    return template.split("{")[0].rstrip(" :,(") if "{" in template else template


# python-oracledb's own errors (DPY-NNNN): code -> message template; the class
# follows python-oracledb's numbering (1xxx InterfaceError, 2xxx ProgrammingError,
# 3xxx NotSupportedError, 4xxx DatabaseError, 6xxx OperationalError)
_DPY_CLASSES: dict[int, type[Error]] = {1: InterfaceError, 2: ProgrammingError, 3: NotSupportedError,
                                        4: DatabaseError, 6: OperationalError, 7: DatabaseError}
_DPY_CATALOG: dict[int, str] = {
    1001: "not connected to database",
    1002: "connection pool is not open",
    1003: "the executed statement does not return rows",
    1004: "no statement executed",
    1005: "connection pool cannot be closed because connections are busy",
    1007: "subscription is not active",
    2000: "message has no payload",
    2001: "no statement specified and no prior statement prepared",
    2002: "statement must be prepared first",
    2003: "expecting a dictionary, list or tuple, or keyword args",
    2004: ('"parameters" argument should be a list of sequences or dictionaries, or an integer '
           "specifying the number of times to execute the statement"),
    2005: "expecting positional arguments or keyword arguments, not both",
    2006: "positional and named binds cannot be intermixed",
    2009: "scroll mode must be relative, absolute, first or last",
    2012: "arguments must be a list or tuple",
    2013: '"keyword_parameters" argument must be a dict',
    2014: '"{0}" and "{1}" cannot be specified together',
    2015: "type handler should return None or the value returned by a call to cursor.var()",
    2016: "variable array size of {0} is too small (should be at least {1})",
    2020: '"{0}" argument contains invalid values',
    2021: "init_oracle_client() must be called first",
    2023: "invalid connection class",
    2025: "invalid connection params: {0}",
    2026: "invalid connection pool class",
    2027: "invalid pool params: {0}",
    2028: "expecting list when setting array variables",
    2030: "LOB offset must be greater than zero",
    2037: "no object type specified for object variable",
    2040: ('parameters "batcherrors" and "arraydmlrowcounts" may only be true when used with '
           "insert, update, delete and merge statements"),
    2045: "arraysize must be an integer greater than zero",
    2047: "LOB amount must be greater than zero",
    2048: ('the bind variable placeholder ":{0}" cannot be used both before and after the RETURNING '
           "clause in a DML RETURNING statement"),
    2054: 'connection pool with alias "{0}" does not exist',
    2055: 'connection pool with alias "{0}" already exists',
    2062: "payload cannot be enqueued since it does not match the payload type supported by the queue",
    2063: "scroll operation would go out of the result set",
    2064: "parameter 'max' should be greater than or equal to parameter 'min'",
    2068: "scroll operation is not supported on a non-scrollable cursor",
    2069: "requested schema has {0} columns defined but {1} are being fetched",
    2070: "Expected a callable function",
    2071: "cannot register a query on an AQ subscription",
    2075: ('the length of the "{0}" parameter exceeds the maximum allowed length of {1} '
           "UTF-8 encoded bytes"),
    3001: "{0} is not supported by Sluice: {1}",
    3002: 'Python value of type "{0}" is not supported',
    3003: "Python type {0} is not supported",
    3009: "binding to self is not supported",
    3014: "LOB is of type {0} but must be of type {1}",
    3027: "binding a cursor from a different connection is not supported",
    3026: "operation is only supported on BFILE LOBs",
    3030: "conversion from Oracle Database type {0} to Apache Arrow format is not supported",
    3038: 'database type "{0}" cannot be converted to Apache Arrow type "{1}"',
    4025: "invalid REF CURSOR: never opened in PL/SQL",
    4024: "call timeout of {0} ms exceeded",
    4005: "timed out waiting for the connection pool to return a connection",
    4006: "array DML row counts mode is not enabled",
    4008: 'no bind placeholder named ":{0}" was found in the SQL text',
    4009: "{0} positional bind values are required but {1} were provided",
    4022: "invalid value for enumeration {0}: {1}",
    4036: "{0} cannot be converted to an Apache Arrow integer",
    # a warning (cursor.warning), not raised: python-oracledb's for a PL/SQL unit that failed to compile
    7000: "creation succeeded with compilation errors",
}


def dpy(code: int, *args: object, cls: type[Error] | None = None) -> Error:
    """Build python-oracledb's driver error DPY-``code`` (``str()`` starts ``DPY-2014: …``);
    ``cls`` overrides the class (:class:`ArgumentError` for an unknown keyword)."""
    text = _format(_DPY_CATALOG[code], args)
    return (cls or _DPY_CLASSES[code // 1000])(f"DPY-{code:04d}: {text}", code, prefix="DPY")


def remote_error(code: int | None, message: str) -> DatabaseError:
    """The exception for an error another server reported (an IDAP Fault's ORA code and
    message): the class of ``code`` where Sluice knows it, the message as received."""
    cls = _CATALOG[code][0] if code in _CATALOG else DatabaseError
    return cls(message, code or 0)


def raised_by_sluice_sql(message: str) -> DatabaseError | None:
    """The Oracle error a statement of Sluice's own in the database raised (a synchronous
    capture's trigger refusing a change: ``ORA-01031: insufficient privileges``), as the
    backend reports it; None for any other error."""
    found = re.match(r"ORA-(\d{5}): ", message)
    return remote_error(int(found.group(1)), message.splitlines()[0]) if found else None


def uint32_setting(value: object) -> int:
    """``value`` as python-oracledb takes an unsigned 32-bit setting (its Cython's errors)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expecting integer, got {type(value).__name__}")
    if not 0 <= value < 2 ** 32:
        raise OverflowError("value must be an unsigned 32-bit integer")
    return value


def not_supported(what: str) -> NotSupportedError:
    """A feature Sluice does not (yet) offer; ``SLU-00001`` since Oracle has no code."""
    return NotSupportedError(f"SLU-00001: not supported: {what}", 1, prefix="SLU")


def known_codes() -> frozenset[int]:
    """The ORA codes Sluice can raise (for documentation and tests)."""
    return frozenset(_CATALOG)
