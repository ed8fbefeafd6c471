"""Apply.  Built: the catalog entry (``adm.py``: DBMS_APPLY_ADM.CREATE_APPLY / ALTER_APPLY /
DROP_APPLY, :func:`apply_for_rules` for DBMS_STREAMS_ADM; ``spec.py``: the DBA_APPLY row).
Not built yet (wave 2), the engine: dequeue LCRs and user messages from the apply queue and
apply them to the target database, transaction by transaction, in source commit order.

Its job, from the seeds: seed 001_0cd730aa595c4170.txt "Queues and Apply Processes" and
Table 3-1 "Apply Process Behavior for Transactional and Nontransactional Queues"
(captured LCRs always in source transactions; user-enqueued messages grouped by the
enqueuing transaction in a transactional queue, one at a time otherwise), "Combined
Capture and Apply Optimization"; seed 000_c58e7ef949d95dc2.txt "Row Migration During
Apply", "Execution Directives for Messages During Apply", "Enqueue Destinations for
Messages During Apply" (action contexts), and the apply rows of Table 6-3.

It will decide with :func:`sluice.streams.evaluate_rule_sets`, dequeue through
:mod:`sluice.aq` (``NEXT_TRANSACTION`` navigation), and record the applied low-watermark
in the same target transaction as the changes, so a replay changes nothing (DESIGN.md
sections 5 and 7).  The Spark engine (:mod:`sluice.pipeline`) applies with the same
semantics in ``foreachBatch``.
"""

from .adm import ApplyAdm, apply_for_rules

__all__ = ["ApplyAdm", "apply_for_rules"]
