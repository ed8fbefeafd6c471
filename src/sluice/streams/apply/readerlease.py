"""The apply reader's lease: who, besides the apply process's own dequeues, takes an apply
process's LCRs -- a combined capture handing them over, or a Spark pipeline running it.

An apply process is run by one engine at a time: the process host and ``sluice pipeline run
--apply A`` share the lease ``("APPLY", "A")`` (:mod:`sluice.pipeline.lease`).  Combined
capture and apply (seed 001; :mod:`sluice.streams.capture.combinedlocal`,
:mod:`~sluice.streams.capture.combinedremote`) is a second way in: the capture runs the apply
process's code on the LCRs it captures, while a host's copy of the apply process keeps
dequeuing whatever is staged (nothing, while the capture is combined).  That pair may run
together -- both are the Python engine, each transaction kept once by SLUICE_APPLY_DONE, in
commit order because nothing is staged.  A Spark run may not: it would apply what is staged
while the capture applies what it captures, two engines in two orders.  The host's lease
cannot tell them apart (a host's apply process holds it while a capture is combined), so
the reader has a lease of its own, ``("APPLY READER", "A")``, in the apply's store:

* a capture takes it when it chooses the combined route to ``A`` and holds it until it
  leaves that route; a capture that cannot take it (a pipeline runs ``A``) is not combined
  and stages in its own queue, as it does when it does not qualify -- OPTIMIZATION 0 in
  V$STREAMS_CAPTURE and V$PROPAGATION_SENDER, no PROXY_SID -- and Spark reads ``A``'s queue
  (across two databases the propagation job fills it);
* a pipeline running ``A`` takes it with ``("APPLY", "A")`` and is refused (ORA-26666, naming
  the capture) while a capture holds it.

A PostgreSQL lease lives in a session: lost with it (:meth:`ReaderLease.alive`, asked before
each batch) the capture stages that batch and leaves the combined route.  Seed 001: a capture
that stages uses the combined route again only when it is started again.
"""

from __future__ import annotations

from typing import Any

from ...errors import DatabaseError
from ...store.leases import open_leases

__all__ = ["READER", "ReaderLease", "reader_key"]

READER = "APPLY READER"


def reader_key(apply_name: str) -> tuple[str, str]:
    """The lease of whoever reads for apply process ``apply_name`` (module docstring)."""
    return READER, apply_name


class ReaderLease:
    """The reader lease of one apply process, held by a combined capture."""

    def __init__(self, leases: Any, apply_name: str) -> None:
        self._leases, self.apply_name = leases, apply_name

    @classmethod
    def take(cls, store: Any, apply_name: str) -> "ReaderLease | None":
        """The lease of ``apply_name`` in its store ``store``; None when another engine (a Spark
        pipeline) holds it."""
        leases = open_leases(store)
        try:
            if leases.acquire(*reader_key(apply_name)):
                return cls(leases, apply_name)
        except BaseException:
            leases.close()
            raise
        leases.close()
        return None

    def alive(self) -> bool:
        """False once the lease may have been lost (PostgreSQL: its session is gone)."""
        try:
            return self._leases is not None and self._leases.alive()
        except DatabaseError:   # cannot tell: as good as lost
            return False

    def close(self) -> None:
        """Let the lease go (a no-op the second time)."""
        leases, self._leases = self._leases, None
        if leases is not None:
            leases.close()
