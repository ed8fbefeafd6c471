"""The one backend contract: :class:`Store` and :class:`StoreSession`.

Every backend (SQLite, PostgreSQL) implements these two classes; the AQ layer
above never issues SQL of its own.  The docstrings are the contract; the
behavioural suite in ``tests/`` runs unchanged over every backend.

Vocabulary (Oracle's):

* a **queue table** holds the messages of one or more **queues** (they share
  payload type, sort order, grouping);
* a **message record** is one row of a queue table;
* a **session** is one ``sluice.Connection``: it owns one transaction at a
  time.  ON_COMMIT work becomes visible to other sessions atomically at
  :meth:`StoreSession.commit`; IMMEDIATE work is its own transaction.
"""

from __future__ import annotations

import abc
import itertools
import operator
import os
import struct
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, ContextManager, Iterable, Sequence

from .sessions import OpenSession
from .sessionnls import SessionNls
from .sessionzone import SessionZone

_TXN_PREFIX = os.urandom(3).hex().upper()

# A session killed while it holds messages releases them (its POSIX locks, its server
# transaction) without telling anyone: its process cannot.  So a waiting dequeue looks
# again at least this often even when nothing announced a change (seconds).
RELEASE_RECHECK = 1.0
_txn_numbers = itertools.count(1)
_txn_head = ""


def _set_txn_head() -> None:
    global _txn_head
    _txn_head = f"{_TXN_PREFIX}.{os.getpid():X}."


_set_txn_head()
os.register_at_fork(after_in_child=_set_txn_head)


def new_txn_id() -> str:
    """A transaction identifier, unique across processes and restarts (like Oracle's
    XID, printed as hex parts): random prefix, process id, counter."""
    return f"{_txn_head}{next(_txn_numbers):X}"


_MSGID = struct.Struct(">QQ")


def _draw_msgid_tail() -> None:
    """40 random bits for this process's message ids, and a fresh counter.  Drawn again in a
    forked child: it would otherwise share its parent's bits and counter, and two processes
    enqueuing in the same nanosecond could make the same message id."""
    global _MSGID_TAIL, _msgid_numbers
    _MSGID_TAIL = int.from_bytes(os.urandom(5), "big") << 24   # this process, then a counter
    _msgid_numbers = itertools.count()


_draw_msgid_tail()
os.register_at_fork(after_in_child=_draw_msgid_tail)


def new_msgid() -> bytes:
    """A message id (RAW(16), like Oracle's SYS_GUID-based ids): nanoseconds since the
    epoch, then 40 random bits fixed per process and a 24-bit counter.  Unique across
    processes; increasing over time, so a store's message-id index grows at one end
    instead of at random places."""
    return _MSGID.pack(time.time_ns(), _MSGID_TAIL | (next(_msgid_numbers) & 0xFFFFFF))


# a sort list -> QueueTableInfo.order_columns
_ORDER_COLUMNS: dict[tuple[str, ...], tuple[str, ...]] = {}

# sort_list keys -> the message record column they order by
SORT_COLUMNS = {"PRIORITY": "PRIORITY", "ENQ_TIME": "ENQ_TIME", "COMMIT_TIME": "CSCN"}


# who holds a message (StoreSession.message_status)
HELD_HERE, HELD_ELSEWHERE = "HERE", "ELSEWHERE"


@dataclass(slots=True)
class QueueTableInfo:
    """One queue table (``DBA_QUEUE_TABLES`` row)."""

    owner: str
    name: str
    payload_type: str               # 'RAW', 'JSON', 'XMLTYPE', 'SYS.ANYDATA' or 'OWNER.TYPE'
    sort_list: tuple[str, ...]      # e.g. ('PRIORITY', 'ENQ_TIME')
    multiple_consumers: bool = False
    message_grouping: str = "NONE"  # 'NONE' | 'TRANSACTIONAL'
    comment: str | None = None
    compatible: str = "10.0.0"
    secure: bool = False
    primary_instance: int = 0
    secondary_instance: int = 0
    qt_id: int = 0
    # a sharded queue / Transactional Event Queue's table (named like its one queue): the
    # store keeps the mark and the queue's parameters in a SLUICE_CATALOG row of kind
    # SHARDED_QUEUE (SHARDED_KIND), so an older store's AQ_QUEUE_TABLES serves unchanged
    sharded: bool = False
    # a sharded queue's exception queue (DBMS_AQADM.CREATE_EXCEPTION_QUEUE; None: it has none,
    # and a message past its retries or expiry is purged), kept in the SHARDED_QUEUE row
    sharded_exception_queue: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"

    @property
    def commit_time(self) -> bool:
        return "COMMIT_TIME" in self.sort_list

    @property
    def order_columns(self) -> tuple[str, ...]:
        """Columns of the dequeue order; the sequence number breaks ties."""
        cols = _ORDER_COLUMNS.get(self.sort_list)     # (asked on every dequeue)
        if cols is None:
            cols = [SORT_COLUMNS[k] for k in self.sort_list]
            if "ENQ_TIME" not in cols and "CSCN" not in cols:
                cols.append("ENQ_TIME")  # equal priorities leave in enqueue order
            cols = _ORDER_COLUMNS[tuple(self.sort_list)] = tuple(cols) + ("SEQ",)
        return cols

    @property
    def exception_queue_name(self) -> str | None:
        """The default exception queue: created with a classic table; a sharded queue's is
        the one CREATE_EXCEPTION_QUEUE made, if any (Oracle 12.2's CREATE_SHARDED_QUEUE: "After
        the retry limit has been exceeded, the message will be purged from the queue")."""
        return self.sharded_exception_queue if self.sharded else legacy_exception_queue_name(self.name)


# the SLUICE_CATALOG kind marking a sharded queue's table (see QueueTableInfo.sharded)
SHARDED_KIND = "SHARDED_QUEUE"


def legacy_exception_queue_name(table_name: str) -> str:
    """``AQ$_<table>_E``: a classic queue table's default exception queue, and the one every
    sharded queue got before CREATE_EXCEPTION_QUEUE (a SHARDED_QUEUE row without the
    ``exception_queue`` key, see :func:`sharded_from_spec`)."""
    return f"AQ$_{table_name}_E"


def sharded_from_spec(table_name: str, spec: dict | None) -> tuple[bool, str | None]:
    """``(sharded, its exception queue)`` from the table's SHARDED_QUEUE row (None: no row,
    a classic table).  A row written before CREATE_EXCEPTION_QUEUE has no ``exception_queue``
    key: its sharded queue was made with AQ$_<name>_E, which stays its exception queue."""
    if spec is None:
        return False, None
    return True, spec.get("exception_queue", legacy_exception_queue_name(table_name))


@dataclass(slots=True)
class QueueInfo:
    """One queue (``DBA_QUEUES`` row) and the queue table it lives in."""

    owner: str
    name: str
    table: QueueTableInfo
    queue_type: str = "NORMAL_QUEUE"    # or 'EXCEPTION_QUEUE'
    max_retries: int = 5
    retry_delay: float = 0.0
    retention_time: float = 0.0         # seconds, -1 = FOREVER
    enqueue_enabled: bool = False
    dequeue_enabled: bool = False
    comment: str | None = None
    qid: int = 0
    # OWNER.NAME, read on every enqueue and dequeue: built once (owner and name never change)
    qualified: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        self.qualified = f"{self.owner}.{self.name}"

    @property
    def is_exception_queue(self) -> bool:
        return self.queue_type == "EXCEPTION_QUEUE"


# Columns of a message record, in storage order.  Names are the columns of an
# Oracle queue table, plus SEQ (our ordering tiebreak) and a few of the
# AQ$<queue_table> view's columns kept physically.
RECORD_COLUMNS = (
    "SEQ", "Q_NAME", "MSGID", "CORRID", "PRIORITY", "STATE", "DELAY", "EXPIRATION",
    "EXPIRE_AT", "TIME_MANAGER_INFO", "CSCN", "ENQ_TIME", "ENQ_UID", "ENQ_TID", "DEQ_TIME",
    "DEQ_UID", "DEQ_TID", "RETRY_COUNT", "EXCEPTION_QSCHEMA", "EXCEPTION_QUEUE",
    "SENDER_NAME", "SENDER_ADDRESS", "SENDER_PROTOCOL", "ORIGINAL_MSGID",
    "ORIGINAL_QUEUE_NAME", "ORIGINAL_QUEUE_OWNER", "EXPIRATION_REASON", "CONSUMER_NAME",
    "DEQ_AGENT_NAME", "DELIVERY_MODE", "USER_DATA", "ADDRESS", "PROTOCOL", "RECIPIENT_LIST",
)


@dataclass(slots=True)
class MessageRecord:
    """One message as stored.  Times are POSIX seconds (float).

    ``delay`` is the time the message becomes READY (None: no delay);
    ``expiration`` is the relative expiration in seconds as enqueued (None:
    never) and ``expire_at`` the absolute time it expires (delay end +
    expiration).  ``time_manager_info`` is the next time the time manager must
    look at the record: when it becomes READY (WAITING), expires (READY) or is
    purged after retention (PROCESSED).  ``txn`` is the enqueuing transaction
    (``ENQ_TID``), which is also the message group of TRANSACTIONAL tables.
    """

    seq: int | None
    q_name: str
    msgid: bytes
    corrid: str | None
    priority: int
    state: int
    delay: float | None
    expiration: int | None
    expire_at: float | None
    time_manager_info: float | None
    cscn: int | None
    enq_time: float
    enq_uid: str | None
    enq_tid: str | None
    deq_time: float | None = None
    deq_uid: str | None = None
    deq_tid: str | None = None
    retry_count: int = 0
    exception_qschema: str | None = None
    exception_queue: str | None = None
    sender_name: str | None = None
    sender_address: str | None = None
    sender_protocol: int | None = None
    original_msgid: bytes | None = None
    original_queue_name: str | None = None
    original_queue_owner: str | None = None
    expiration_reason: str | None = None
    consumer_name: str | None = None
    deq_agent_name: str | None = None
    delivery_mode: int = 1
    user_data: Any = None
    # multi-consumer queue tables keep one record per intended consumer: CONSUMER_NAME
    # (None in single-consumer tables and once a message is in an exception queue),
    # ADDRESS and PROTOCOL of a remote recipient, and for a third-party protocol's
    # reserved consumer (AQ$_P<n>) the recipients it stands for, as JSON
    address: str | None = None
    protocol: int | None = None
    recipient_list: str | None = None
    # not a column: the notifications the enqueue owes registrations, as
    # (registration id, payload or None); written with the record (see sqlnotify)
    notices: list | None = None

    def as_row(self) -> tuple:
        return _ROW_GETTER(self)

    def insert_row(self) -> tuple:
        """The row without SEQ (which the database assigns)."""
        return _INSERT_GETTER(self)

    @classmethod
    def from_row(cls, row: Sequence) -> "MessageRecord":
        return cls(*row)


@dataclass(slots=True)
class Selector:
    """Which message a dequeue wants (built by the AQ layer).

    ``after`` is the navigation position: the order key (values of
    ``QueueTableInfo.order_columns``) of the last message this session saw;
    only messages ordered strictly after it qualify.  ``predicate`` is a
    Python test on the decoded record (dequeue condition), applied by the
    store after the SQL filters, in order.
    """

    msgid: bytes | None = None
    correlation: str | None = None           # LIKE pattern, % and _
    after: tuple | None = None
    group: str | None = None                 # only this message group (ENQ_TID)
    skip_groups: frozenset[str] = frozenset()
    predicate: Callable[[MessageRecord], bool] | None = None
    consumer_name: str | None = None         # multi-consumer tables: whose record (None: the
    states: tuple[int, ...] = (0,)           # consumer-less copy in an exception queue)
    multi: bool = False                      # the queue keeps one record per consumer
    delivery_mode: int | None = None         # 1 persistent, 2 buffered (spilled), None: both
    # the dequeue condition as SQL over the queue table, when the rules engine could compile
    # it: (text with ? placeholders, parameters).  The store then applies it in SQL and
    # ``predicate`` only to what is not in the table (a session's own uncommitted messages)
    sql_condition: tuple[str, list] | None = None
    # propagation (multi-consumer tables): the records of remote recipients it moves, not a
    # consumer's — ("address", "OWNER.Q@LINK"): addressed to that queue; ("link", "LINK"):
    # to any queue at that link; ("local", None): to a queue of this site.  consumer_name
    # is then ignored
    remote: tuple[str, str | None] | None = None


def remote_match(remote: tuple[str, str | None], address: str | None) -> bool:
    """Whether a record with ``address`` is one a propagation's ``Selector.remote`` takes."""
    if address is None:
        return False
    kind, value = remote
    if kind == "address":
        return address == value
    if kind == "link":
        return address.endswith(f"@{value}")
    return "@" not in address


@dataclass(slots=True)
class DequeueInfo:
    """Who dequeues, recorded on the message for non-repudiation; and ``check``, run on
    what an IMMEDIATE REMOVE took inside its own transaction, before that commits: when
    it raises, the dequeue takes nothing (the caller reads the messages there — a
    payload that cannot be read must not be gone once the error is reported)."""

    user: str
    agent_name: str | None = None
    consumer_name: str | None = None
    check: Callable[[list[MessageRecord]], None] | None = None


@dataclass(slots=True)
class TimeEvents:
    """What one run of the time manager did, and when it must run next."""

    promoted: int = 0
    expired: int = 0
    purged: int = 0
    next_due: float | None = None
    moved: list = field(default_factory=list)


class StoreSession(abc.ABC):
    """The store side of one ``sluice.Connection``.

    A session holds at most one open transaction.  Until :meth:`commit`, its
    ON_COMMIT enqueues are invisible to every other session and the messages it
    dequeued (REMOVE or LOCKED) are locked: other sessions skip them.
    """

    txn_id: str | None
    sid: int    # the session's SID in V$SESSION (:mod:`.sessions`)
    time_zone: SessionZone      # SESSIONTIMEZONE: the views' dates and CURRENT_DATE are in it
    local_zone: SessionZone     # the zone it started in (ALTER SESSION SET TIME_ZONE = LOCAL)
    nls: SessionNls             # ALTER SESSION SET NLS_…: its formats (.sessionnls; set by the connection)

    @abc.abstractmethod
    def enqueue(self, queue: QueueInfo, records: list[MessageRecord], immediate: bool) -> None:
        """Add ``records`` to ``queue``.

        All or nothing: either every record is added or none is.  With
        ``immediate`` the records are committed at once in a transaction of
        their own (ENQ_IMMEDIATE), whatever the session's transaction does
        later; otherwise they join the session's transaction.  ``seq`` and
        (for commit-time tables) ``cscn`` are assigned by the store when the
        records become visible.
        """

    @abc.abstractmethod
    def dequeue(self, queue: QueueInfo, selector: Selector, mode: int, immediate: bool,
                limit: int, info: DequeueInfo) -> list[MessageRecord]:
        """Take up to ``limit`` messages of ``queue`` that match ``selector``, in order.

        ``mode`` is DEQ_BROWSE (nothing locked or changed), DEQ_LOCKED (locked
        until the transaction ends), DEQ_REMOVE / DEQ_REMOVE_NODATA (locked now,
        consumed at commit — deleted, or kept as PROCESSED when the queue has a
        retention time).  Messages locked by another session are skipped, never
        waited for.  With ``immediate`` a REMOVE is committed at once, in a
        transaction of its own (seed 003 "Optional Transaction Protection"): it
        skips the messages this session's transaction holds as it skips another
        session's.  Returns an empty list when nothing qualifies now; never blocks.
        """

    @abc.abstractmethod
    def message_status(self, queue: QueueInfo, msgid: bytes,
                       consumer: str | None = None) -> tuple[int, str | None] | None:
        """``(state, held)`` of a message of ``queue`` (in a multi-consumer queue: of
        ``consumer``'s record), or None; ``held`` is :data:`HELD_HERE` (this session's
        open transaction dequeued it), :data:`HELD_ELSEWHERE` (another session's) or
        None (no one's)."""

    @abc.abstractmethod
    def commit(self) -> None:
        """Make the transaction's enqueues visible and its REMOVE dequeues final, atomically;
        release every lock it holds and wake waiting dequeuers."""

    # -- a commit overlapping other work (PostgreSQL: the server commits while the
    # process goes on; elsewhere the commit is whole when send_commit returns)
    sends_commit = False

    def defer_bulk_inserts(self) -> None:
        """This transaction's bulk inserts may be sent with the commit (see PgSession)."""

    def send_commit(self) -> None:
        """Commit; the outcome may be known only once :meth:`await_commit` returns."""
        self.commit()

    def await_commit(self) -> None:
        """Wait for the commit :meth:`send_commit` started; raise its error."""

    def write_commit_time_enqueues(self) -> None:
        """Write this transaction's ON_COMMIT enqueues into commit-time queue tables now,
        not at its commit, so the session no longer holds their records (a capture process
        staging a large spilled transaction calls it after each chunk: streams/capture/
        spill.py).  They are numbered with the transaction's commit SCN drawn at the first
        call — the SCN counter stays locked by this transaction from then until it ends, so
        the numbers still follow commit order, and the later enqueues of the transaction
        get the same SCN.  Nobody else sees them before the commit; a rollback, or one to a
        savepoint taken before, discards them (and the SCN, when it was drawn since).
        Unlike records held until the commit, the transaction itself sees them once written
        (a dequeue of its own queue would find them).  The cost: other transactions
        enqueuing into commit-time queues wait for this one's end from the first call (on
        SQLite: every writer, as for DML)."""

    @abc.abstractmethod
    def add_commit_work(self, work: Callable[[Any], None]) -> None:
        """Run ``work(c)`` inside this transaction's commit, in the same database transaction
        as its enqueues and dequeues: all of it is committed or none.  ``c`` speaks the
        store's shared SQL (``c.execute(sql, params)`` with ``?`` placeholders); ``work``
        only writes.  Work added is part of the transaction (``in_transaction`` is true) and
        runs in the order added, after the transaction's enqueues; a rollback discards it, and
        a rollback to a savepoint the work added since.
        This is how a consumer's position advances with the effect it guards (a capture
        process's log position with the LCRs it enqueued, DESIGN §7 "Exactly once")."""

    @abc.abstractmethod
    def undeliverable(self, queue: QueueInfo, records: list[MessageRecord]) -> None:
        """``records`` of ``queue``, which this transaction dequeued (REMOVE), are not
        consumed at its commit: they stay, UNDELIVERABLE (``STATE_UNDELIVERABLE``; seed 003
        "Propagation failures"), locked until then; a rollback releases them as they were."""

    @abc.abstractmethod
    def rollback(self) -> None:
        """Discard the transaction's enqueues; release its locks.

        Each message it dequeued in REMOVE mode counts a failed attempt
        (``RETRY_COUNT + 1``).  A message whose count exceeds its queue's
        ``max_retries`` moves to its exception queue (state EXPIRED, reason
        MAX_RETRY_EXCEEDED); otherwise, if the queue has a ``retry_delay``, it is
        WAITING until the delay ends.
        """

    @abc.abstractmethod
    def savepoint(self, pipelined: bool = False) -> object:
        """A mark of the transaction as it is now, for :meth:`rollback_to_savepoint`.
        ``pipelined`` (a statement's implicit savepoint): the database's SAVEPOINT may go
        with enqueues sent without waiting (PostgreSQL's pipeline) instead of reading
        their answers first."""

    @abc.abstractmethod
    def release_savepoint(self, mark: object) -> None:
        """Forget ``mark`` (SQL's RELEASE SAVEPOINT): the work since stays in the
        transaction, the database's savepoint goes (an implicit statement savepoint is
        released when its statement succeeds, so a long transaction does not pile them up).
        Nothing to do when the transaction ended since or had not begun at the mark."""

    @abc.abstractmethod
    def rollback_to_savepoint(self, mark: object) -> None:
        """Undo what the transaction did since ``mark`` (Oracle's ROLLBACK TO SAVEPOINT):
        its ON_COMMIT enqueues since are discarded and the messages it dequeued since are
        released as they were — no failed attempt is counted, nobody processed them —;
        what it did before stays, locks included.  IMMEDIATE operations were transactions
        of their own: they stay.  :raises: ORA-01086 when the transaction ended since."""

    @abc.abstractmethod
    def set_roles(self, mode: str, roles: tuple[str, ...]) -> None:
        """SET ROLE for this session's SESSION_ROLES (and the views read from it): ``mode``
        ALL (every role granted, the default), ONLY (``roles`` and theirs; none for SET ROLE
        NONE) or EXCEPT (every role granted to the user or PUBLIC but ``roles``).  What
        the session's calls may do is the Authorizer's to count; this is only what the
        views show."""

    @abc.abstractmethod
    def set_time_zone(self, zone: SessionZone) -> None:
        """ALTER SESSION SET TIME_ZONE: the session's views show their dates in ``zone``
        from now on, whatever the open transaction does (:attr:`time_zone` is it; a new
        session starts in :func:`.sessionzone.default_zone`, kept as :attr:`local_zone`)."""

    @abc.abstractmethod
    def query(self, sql: str, binds: dict | Sequence | None,
              in_memory: Sequence[tuple[QueueTableInfo, list[MessageRecord]]] = (),
              oracle_names: bool = True, oracle_sql: bool = False,
              decimals: bool = False) -> tuple[list[str], list[tuple]]:
        """Run a read-only SELECT on the catalog and message views as this session's user;
        Oracle names (``AQ$QT``, ``scott.qt``, ``USER_QUEUES``) resolve to the store's
        (``oracle_names`` False: the statement names none, and skips looking them up).
        ``oracle_sql``: a user typed it, and Oracle's session words in it (USER, SYSDATE,
        SYS_CONTEXT('USERENV', …)) and its divisions answer as Oracle's (:mod:`.sqloracle`).
        ``in_memory``: the records of buffered messages this process keeps in memory, per
        queue table; its ``AQ$`` view shows them too, with state IN-MEMORY (seed 003).
        With ``oracle_sql`` the rows and names are as python-oracledb fetches them
        (:mod:`.sqlfetch`): numbers as ints or floats (``decimals``: as ``Decimal``), the
        names a :class:`~.sqlfetch.Headings` with its ``cursor.description``."""

    @abc.abstractmethod
    def row_locks(self, locking: Any) -> ContextManager[str | None]:
        """``SELECT … FOR UPDATE`` (``locking``: its :class:`.forupdate.RowLocking`): the rows
        locked for the session's transaction, as :mod:`.forupdate` says each store does;
        yields the statement to run, None when SKIP LOCKED finds every row locked."""

    @abc.abstractmethod
    def execute_dml(self, sql: str, binds: dict | Sequence | None, tag: bytes | None,
                    returned: list | None = None) -> int:
        """Run an INSERT / UPDATE / DELETE / MERGE on the store's database in this session's
        transaction (committed or rolled back with its enqueues and dequeues); returns the
        rows it changed.  A statement that fails is undone alone (Oracle's statement-level
        rollback).  Oracle's session words answer as in :meth:`query` with ``oracle_sql``.  ``tag`` (DBMS_STREAMS.SET_TAG) is what a synchronous capture's triggers
        see as the writer's tag: PostgreSQL's transaction-local ``sluice.tag`` setting, the
        SQLite ``SLUICE_SYNC_SESSION`` row (with this transaction's id).
        ``returned``: a list the rows of the statement's ``RETURNING`` clause (one per row
        changed, as the store fetches them) are added to."""

    @abc.abstractmethod
    def close(self) -> None:
        """Roll back anything open and release the session's resources."""

    def healthy(self) -> bool:
        """Whether the session can go on, as far as it knows without a round trip
        (python-oracledb's ``is_healthy()``); a store whose connection can be lost says so."""
        return True

    @property
    @abc.abstractmethod
    def in_transaction(self) -> bool:
        """True while the session holds uncommitted work or locks."""


class Store(abc.ABC):
    """One database holding queue tables, queues and their messages.

    Catalog changes (queue tables, queues, types, transformations) are DDL:
    each call is atomic and committed on return, whatever any session is doing.
    """

    dialect: str
    # whether change_counter() grows at once for every process's commits with enqueues, released
    # locks and promotions (SQLite: a counter in the shared lock file — two bumps racing may
    # count once, which still moves it); a PostgreSQL store hears of other processes' commits
    # only on the tables it listens to
    changes_complete: bool = False

    def on_close(self, hook) -> None:
        """Run ``hook()`` when the store closes (threads of upper layers stop there)."""
        self.__dict__.setdefault("_close_hooks", []).append(hook)

    def _run_close_hooks(self) -> None:
        for hook in self.__dict__.pop("_close_hooks", []):
            hook()

    # -- sessions ----------------------------------------------------------
    @abc.abstractmethod
    def session(self, user: str) -> StoreSession:
        """A new session acting as database user ``user``."""

    @abc.abstractmethod
    def open_sessions(self, users: Collection[str]) -> list[OpenSession]:
        """The sessions of ``users`` open on the store now, in every process (V$SESSION;
        :mod:`.sessions`).  A session is listed from :meth:`session` until it closes or its
        process dies."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the store; sessions must be closed first."""

    # -- the site ------------------------------------------------------------
    def global_name(self) -> str:
        """The store's global name (DESIGN.md section 7: a store is one Oracle "database",
        a site): what LCRs carry as source_database_name, what database links and
        propagation de-duplication name it by.  Set by ``ALTER DATABASE RENAME GLOBAL_NAME
        TO …`` (:meth:`set_global_name`); until then :meth:`default_global_name`."""
        for owner, name, spec in self.catalog_objects("DATABASE"):
            if (owner, name) == ("SYS", "GLOBAL_NAME"):
                return spec["global_name"]
        return self.default_global_name()

    def set_global_name(self, name: str) -> None:
        self.put_catalog_object("DATABASE", "SYS", "GLOBAL_NAME", {"global_name": name}, replace=True)

    @abc.abstractmethod
    def default_global_name(self) -> str:
        """The global name of a store nobody renamed: its database's name, upper case."""

    # -- catalog -----------------------------------------------------------
    @abc.abstractmethod
    def catalog_version(self) -> int:
        """A number that changes whenever the catalog changes (for caches)."""

    def sync_catalog(self) -> None:
        """Make :meth:`catalog_version` cover every catalog change committed before this
        call, by any process.  Asked before a name missing from a cache is reported missing:
        in Oracle a committed DDL is seen by the next statement of every session.  A store
        whose announcement reaches other processes before the DDL call returns has nothing
        to do (SQLite: the shared counter)."""

    @abc.abstractmethod
    def create_queue_table(self, table: QueueTableInfo, exception_queue: QueueInfo | None,
                           queues: tuple[QueueInfo, ...] = ()) -> QueueTableInfo:
        """Create the queue table, its message storage, its views, its default exception
        queue (None: none, a sharded queue's) and ``queues`` (a sharded queue's one queue), all
        or nothing; a ``sharded`` table gets its SHARDED_QUEUE catalog row in the same
        transaction.
        :raises IntegrityError: ORA-24001 when it exists, ORA-24006 when a queue does."""

    @abc.abstractmethod
    def drop_queue_table(self, owner: str, name: str) -> None:
        """Drop the queue table with all its queues and messages."""

    @abc.abstractmethod
    def queue_table_in_use(self, owner: str, name: str) -> bool:
        """Would :meth:`drop_queue_table` be refused (ORA-00054) now, a session holding one
        of its messages (dequeued, not committed)?  Changes nothing: what DROP USER …
        CASCADE asks of every queue table before it drops anything."""

    @abc.abstractmethod
    def update_queue_table(self, table: QueueTableInfo) -> None:
        """Store changed queue table properties (comment, instances)."""

    @abc.abstractmethod
    def queue_tables(self) -> list[QueueTableInfo]:
        """Every queue table."""

    @abc.abstractmethod
    def create_queue(self, queue: QueueInfo, noting: tuple[str, str, str, dict] | None = None) -> QueueInfo:
        """Add a queue to an existing queue table; with ``noting`` = (kind, owner, name,
        entries), merge ``entries`` into that catalog row in the same transaction (all or
        nothing).  :raises IntegrityError: ORA-24006."""

    @abc.abstractmethod
    def update_queue(self, queue: QueueInfo) -> None:
        """Store changed queue properties (retries, retention, enabled flags, comment)."""

    @abc.abstractmethod
    def drop_queue(self, owner: str, name: str) -> None:
        """Remove the queue and every message in it.  :raises: ORA-00054 while a session
        holds one of its messages."""

    @abc.abstractmethod
    def queue_in_use(self, owner: str, name: str) -> bool:
        """Would :meth:`drop_queue` be refused (ORA-00054) now, a session holding one of the
        queue's messages?  Changes nothing: what REMOVE_QUEUE asks before it drops the
        queue's Streams clients."""

    @abc.abstractmethod
    def queues(self) -> list[QueueInfo]:
        """Every queue, with its queue table."""

    @abc.abstractmethod
    def put_catalog_object(self, kind: str, owner: str, name: str, spec: dict, replace: bool) -> None:
        """Store a named catalog object (kind 'TYPE', 'TRANSFORMATION', …) as a JSON spec.
        :raises IntegrityError: ORA-00955 when it exists and ``replace`` is false."""

    @abc.abstractmethod
    def merge_catalog_object(self, kind: str, owner: str, name: str, change: Callable[[dict], dict],
                             create: bool) -> dict | None:
        """Replace a catalog object's spec by ``change(spec)`` (``{}`` for a missing one when
        ``create``), read and written in one transaction that holds the row, so a change made
        meanwhile by another session is not overwritten; returns the new spec, or None
        (nothing written) when there is none and ``create`` is false."""

    @abc.abstractmethod
    def drop_catalog_object(self, kind: str, owner: str, name: str) -> bool:
        """Remove it; False when there was none."""

    @abc.abstractmethod
    def catalog_objects(self, kind: str) -> list[tuple[str, str, dict]]:
        """``(owner, name, spec)`` of every catalog object of ``kind``."""

    def catalog_objects_of(self, kinds: tuple[str, ...]) -> dict[str, list[tuple[str, str, dict]]]:
        """:meth:`catalog_objects` of each of ``kinds``, read at once (one statement, one
        round trip on a server: a cache that loads a dozen kinds on every connect)."""
        return {kind: self.catalog_objects(kind) for kind in kinds}

    # -- messages outside a session ----------------------------------------
    @abc.abstractmethod
    def count_messages(self, queue: QueueInfo, states: Iterable[int] | None = None) -> int:
        """Messages of ``queue`` (committed), optionally only in ``states``."""

    # -- notification outbox (see sqlnotify) --------------------------------
    @abc.abstractmethod
    def write_notifications(self, queue: str, records: list["MessageRecord"]) -> None:
        """Write the outbox rows owed for ``records`` (their ``notices``) of ``queue``
        (``OWNER.NAME``) as a transaction of their own, committed on return — for buffered
        messages, whose enqueue is no transaction.  Persistent enqueues write theirs in the
        enqueuing transaction instead."""

    @abc.abstractmethod
    def claim_notifications(self, reg_ids: list[str], lease: float, limit: int) -> list[tuple]:
        """Lease up to ``limit`` pending notifications of ``reg_ids`` (committed at once):
        ``(ID, REG_ID, MSGID, QUEUE, CONSUMER_NAME, DELIVERY_MODE, PAYLOAD, CREATED,
        ATTEMPTS)``.  A leased row is offered to nobody else until the lease ends."""

    @abc.abstractmethod
    def finish_notifications(self, ids: list[int]) -> None:
        """Remove delivered (or abandoned) notifications."""

    @abc.abstractmethod
    def release_notifications(self, ids: list[int], at: float) -> None:
        """Offer undelivered notifications again from time ``at``."""

    @abc.abstractmethod
    def drop_registration_notifications(self, reg_id: str) -> None:
        """Forget what is owed to a registration that is gone."""

    @abc.abstractmethod
    def drop_consumer_messages(self, queue: QueueInfo, name: str | None, address: str | None,
                               protocol: int) -> int:
        """REMOVE_SUBSCRIBER: delete the records of ``queue`` still waiting for that consumer
        (committed at once).  Returns how many."""

    @abc.abstractmethod
    def purge_messages(self, table: QueueTableInfo, condition: str | None) -> int:
        """DBMS_AQADM.PURGE_QUEUE_TABLE: delete the messages of ``table`` for which the SQL
        ``condition`` on the ``AQ$<queue_table>`` view (aliased ``qtview``) holds — all
        when None — except messages a session holds locked.  Returns how many."""

    @abc.abstractmethod
    def run_time_manager(self, now: float) -> TimeEvents:
        """One pass of the time manager (AQ's queue monitor) at time ``now``.

        WAITING messages whose delay has ended become READY; READY messages
        whose expiration has passed move to their exception queue (state
        EXPIRED, reason TIME_EXPIRATION); PROCESSED messages past their
        retention are purged.  A message locked by a session is left for a
        later pass.  Safe to run from several processes at once: each change
        happens once.
        """

    @abc.abstractmethod
    def change_counter(self) -> int:
        """A number that grows whenever messages may have become available
        (commits with enqueues, released locks, time manager promotions)."""

    @abc.abstractmethod
    def wake_waiters(self) -> None:
        """Wake every thread of this process blocked in :meth:`wait_for_messages`."""

    @abc.abstractmethod
    def wait_for_messages(self, since: int, timeout: float) -> None:
        """Block until :meth:`change_counter` differs from ``since`` or ``timeout``
        seconds pass.  Never busy-polls inside a process; changes made by other
        processes are noticed within a bounded delay (backend-specific), and it returns
        after :data:`RELEASE_RECHECK` seconds at most, so that messages a killed session
        released unannounced are found by the caller's next look."""

    @abc.abstractmethod
    def start_time_manager(self) -> None:
        """Run the time manager in the background while the store is open."""


_ROW_GETTER = operator.attrgetter(*(c.lower() for c in RECORD_COLUMNS))
_INSERT_GETTER = operator.attrgetter(*(c.lower() for c in RECORD_COLUMNS[1:]))
