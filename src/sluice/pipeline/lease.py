"""A pipeline's leases: the Streams process it runs is run by one engine at a time.

DESIGN.md section 7: each process runs "exactly once across hosts (leases)", and "the same
catalog definition runs in the Python host or on Spark".  So ``sluice pipeline run`` takes
the process host's own lease of the process it runs (:mod:`sluice.store.leases`, keyed
``(kind, name)`` as the host keys it) before its query starts and holds it until the run
ends -- released when it stops, on SIGTERM, or with its driver's death, as a host's are:

* ``--apply A``: ``("APPLY", "A")``, and the apply's reader lease ``("APPLY READER", "A")``
  (:mod:`sluice.streams.apply.readerlease`): a capture holding it hands A its LCRs directly
  (combined capture and apply) and the run is refused; one that finds it held stages them;
* ``--propagation P``: the schedule that moves P's messages, ``("PROPAGATION",
  "SCHEMA.QUEUE=>DESTINATION")`` (a host runs schedules, not propagations; every
  propagation that schedule serves waits for the pipeline's end);
* ``--capture C`` reads C's queue as a consumer of its own: it does not run the capture,
  which goes on in its host; nothing to take.

A host meets a held lease as it meets another host's: it skips the process and tries again
every ``takeover`` seconds.  A pipeline that cannot take it is refused, before Spark starts,
with ORA-26666 "cannot alter STREAMS process" (Oracle's for a process that is running)
naming who runs it (V$STREAMS_HOSTED).  Every pipeline also takes ``("PIPELINE", name)``:
two runs of one pipeline name share its low-watermark and would read everything twice.

While it runs, the pipeline's row of V$STREAMS_HOSTED names its driver (host, pid) with
STATE ``RUNNING ON SPARK`` and HOST_ID ``pipeline <NAME>`` -- the engine shows there; the
catalog's STATUS (DBA_APPLY, DBA_PROPAGATION) is left as the administrator set it.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from ..errors import ora
from ..store.leases import Leases, open_leases
from ..streams.apply.readerlease import READER, reader_key
from ..streams.host import HOSTED_FORGET_MINE, HOSTED_RECORD
from ..streams.propagation.schedules import LOCAL
from . import queueio

__all__ = ["SPARK_STATE", "ProcessLease", "propagation_process"]

SPARK_STATE = "RUNNING ON SPARK"


def propagation_process(p: Any) -> tuple[str, str]:
    """The hosted process (kind, name) of the schedule that moves the messages of the
    propagation ``p`` (a :class:`~sluice.streams.propagation.spec.PropagationSpec`; which
    schedule: :func:`sluice.streams.propagation.schedules.serves` -- a queue-to-queue
    propagation's own, else its link's, else the local one)."""
    destination = p.address if p.queue_to_queue else (p.destination_dblink or LOCAL)
    return "PROPAGATION", f"{p.source_queue_owner}.{p.source_queue_name}=>{destination}"


class ProcessLease:
    """The leases of one pipeline run on ``store`` (DSN ``dsn``): its name's and, when it
    runs one, the Streams process's ``process`` = (kind, name)."""

    def __init__(self, store: Any, dsn: str, pipeline: str, process: tuple[str, str] | None) -> None:
        self.store, self.dsn, self.pipeline, self.process = store, dsn, pipeline, process
        self.host_id = f"pipeline {pipeline}"
        self._leases: Leases | None = None

    @property
    def keys(self) -> list[tuple[str, str]]:
        keys = [("PIPELINE", self.pipeline)] + ([self.process] if self.process else [])
        if self.process is not None and self.process[0] == "APPLY":
            keys.append(reader_key(self.process[1]))    # no combined capture hands it LCRs meanwhile
        return keys

    def acquire(self) -> "ProcessLease":
        """Take every lease (none when one is held elsewhere: ORA-26666 naming the holder)
        and show the process in V$STREAMS_HOSTED; again after :meth:`alive` said False."""
        if self._leases is not None and self._leases.alive():
            return self
        self.release()
        leases = open_leases(self.store)
        try:
            for key in self.keys:
                if not leases.acquire(*key):
                    raise self._held_elsewhere(key)
            if self.process is not None:
                with queueio.open_raw(self.dsn) as raw:
                    raw.execute(HOSTED_RECORD, (*self.process, socket.gethostname(), os.getpid(), self.host_id,
                                                SPARK_STATE, time.time(), 0, None))
        except BaseException:
            leases.close()
            raise
        self._leases = leases
        return self

    def alive(self) -> bool:
        """False once the leases may have been lost (PostgreSQL: their session is gone):
        the run must stop its query before it takes them again (:meth:`acquire`)."""
        return self._leases is not None and self._leases.alive()

    def release(self) -> None:
        """Forget the V$STREAMS_HOSTED row, then give every lease up (a no-op when none held)."""
        leases, self._leases = self._leases, None
        if leases is None:
            return
        try:
            if self.process is not None:
                with queueio.open_raw(self.dsn) as raw:
                    raw.execute(HOSTED_FORGET_MINE, (*self.process, self.host_id))
        except Exception:   # noqa: BLE001  (only the view: the next holder overwrites the row)
            pass
        finally:
            leases.close()

    def _held_elsewhere(self, key: tuple[str, str]) -> Exception:
        kind, name = key
        if kind == "PIPELINE":
            return ora(26666, f'pipeline "{name}"', ": another sluice pipeline run of it is running "
                                                     "(one low-watermark: stop it first)")
        if kind == READER:
            return self._combined_capture(name)
        with queueio.open_raw(self.dsn) as raw:
            row = raw.execute("SELECT HOST_NAME, OS_PID, HOST_ID, STATE FROM SLUICE_STREAMS_HOSTED "
                              "WHERE PROCESS_TYPE = ? AND PROCESS_NAME = ?", (kind, name)).fetchone()
        if row is None:
            who = "another engine holds its lease"
        elif row[3] == SPARK_STATE:
            who = f"it runs on Spark as {row[2]} (driver on {row[0]}, pid {row[1]})"
        else:
            who = f"it runs in the process host {row[2][:8]} on {row[0]} (pid {row[1]}), {row[3]}"
        what = f'{kind.lower()} process "{name}"' if kind != "PROPAGATION" else f'propagation schedule "{name}"'
        stop = {"APPLY": "STOP_APPLY", "PROPAGATION": "STOP_PROPAGATION",
                "CAPTURE": "STOP_CAPTURE"}.get(kind, "stop it")
        return ora(26666, what, f": {who} (V$STREAMS_HOSTED; {stop} or stop that run first)")

    def _combined_capture(self, apply: str) -> Exception:
        """ORA-26666 for an apply a combined capture hands LCRs to (it holds the reader lease)."""
        with queueio.open_raw(self.dsn) as raw:
            row = raw.execute("SELECT X.PROXY_SID FROM SLUICE_APPLY_PROXY X JOIN DBA_APPLY A "
                              "ON A.QUEUE_OWNER = X.QUEUE_OWNER AND A.QUEUE_NAME = X.QUEUE_NAME "
                              "WHERE A.APPLY_NAME = ?", (apply,)).fetchone()
        who = f"capture {row[0]}" if row else "a capture"
        return ora(26666, f'apply process "{apply}"',
                   f": {who} hands it LCRs directly (combined capture and apply, "
                   "V$STREAMS_APPLY_READER.PROXY_SID; STOP_CAPTURE or STOP_APPLY first)")
