"""The kinds of Streams process a host runs, registered in one place.

A kind is two or three functions over a connection (DESIGN.md section 7: a process is a catalog
row plus code):

* ``enabled(conn)`` — the names of the processes of that kind the catalog wants running
  (an Oracle administrator's START_*: ``DBA_CAPTURE.STATUS = 'ENABLED'``);
* ``run(conn, name, stop)`` — run one of them on ``conn`` (a session of its own) until
  ``stop`` is set, finishing the batch under way, or until the catalog no longer wants it
  (it returns).  It raises when it fails: a failure the process turned into its catalog
  state (ABORTED, with ERROR_MESSAGE) leaves it no longer enabled, and the host lets it
  be until START_ again (Oracle's semantics); any other exception is a crash of the
  host's worker, which the host restarts with back-off while the process stays enabled;
* ``abort(conn, name, error)`` (optional) — record the process ABORTED with ``error``:
  the host calls it after too many crashes in a row (``Host.max_crashes``); without it
  the host retries for ever.

Registering a new kind is one :func:`register` call at the end of this module::

    register(ProcessKind("APPLY", "sluice.apply", enabled_applies, run_apply, abort_apply))

The host logs each process as ``<logger>.<NAME>`` (``sluice.capture.CAP1``) and shows it
in V$STREAMS_HOSTED as ``PROCESS_TYPE = <name>``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from ..errors import DatabaseError, ora
from .apply import ApplyProcess
from .apply.definition import enabled_applies, set_status
from .capture import CaptureProcess
from .capture import spec as capture_specs
from .capture.context import CaptureContext
from .propagation.runner import hosted_schedules, run_hosted

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["ProcessKind", "kinds", "register"]


@dataclass(frozen=True)
class ProcessKind:
    name: str                                                        # CAPTURE
    logger: str                                                      # sluice.capture
    enabled: Callable[["Connection"], Iterable[str]]
    run: Callable[["Connection", str, threading.Event], None]
    abort: Callable[["Connection", str, Exception], None] | None = None


_KINDS: dict[str, ProcessKind] = {}


def register(kind: ProcessKind) -> None:
    """Make ``kind`` run by every host started from now on (a kind of that name is replaced)."""
    _KINDS[kind.name] = kind


def kinds() -> list[ProcessKind]:
    return list(_KINDS.values())


# -- capture processes (DBMS_CAPTURE_ADM) -------------------------------------------------
def _enabled_captures(conn: "Connection") -> list[str]:
    return [s.name for s in capture_specs.all_specs(CaptureContext(conn)) if s.status == capture_specs.ENABLED]


def _run_capture(conn: "Connection", name: str, stop: threading.Event) -> None:
    try:
        CaptureProcess(conn, name).run(stop)
    except DatabaseError as e:
        # STOP_ or DROP_CAPTURE between the host's listing and the process's start: a stop,
        # not a failure (an ABORTED one's error is in DBA_CAPTURE, and raised)
        spec = capture_specs.find(CaptureContext(conn), name) if e.code == 26666 else None
        if e.code == 26666 and (spec is None or spec.status == capture_specs.DISABLED):
            return
        raise


def _abort_capture(conn: "Connection", name: str, error: Exception) -> None:
    ctx = CaptureContext(conn)
    spec = capture_specs.find(ctx, name)
    if spec is not None and spec.status == capture_specs.ENABLED:   # DBA_CAPTURE shows why
        if not isinstance(error, DatabaseError):
            error = ora(600, f"{type(error).__name__}: {error}")
        capture_specs.save(ctx, spec.with_status(capture_specs.ABORTED, error))


register(ProcessKind("CAPTURE", "sluice.capture", _enabled_captures, _run_capture, _abort_capture))


# -- apply processes (DBMS_APPLY_ADM) -------------------------------------------------------
def _enabled_applies(conn: "Connection") -> list[str]:
    return enabled_applies(CaptureContext(conn))


def _run_apply(conn: "Connection", name: str, stop: threading.Event) -> None:
    ApplyProcess.from_catalog(conn, name).run(stop)


def _abort_apply(conn: "Connection", name: str, error: Exception) -> None:
    ctx = CaptureContext(conn)
    if name in enabled_applies(ctx):                    # DBA_APPLY shows why
        set_status(ctx, name, "ABORTED", error if isinstance(error, DatabaseError)
                   else ora(600, f"{type(error).__name__}: {error}"))


register(ProcessKind("APPLY", "sluice.apply", _enabled_applies, _run_apply, _abort_apply))


# -- propagation schedules (DBMS_AQADM.SCHEDULE_PROPAGATION, DBMS_PROPAGATION_ADM) ----------
# one process per schedule (Oracle: one propagation job per schedule), named
# SCHEMA.QUEUE=>DESTINATION; DISABLE_PROPAGATION_SCHEDULE / STOP_PROPAGATION let it go
register(ProcessKind("PROPAGATION", "sluice.propagation", hosted_schedules, run_hosted))

