"""Apply: dequeue LCRs and user messages from the apply queue and apply them to the target
database, transaction by transaction, in source commit order.

Its job, from the seeds: seed 001_0cd730aa595c4170.txt "Queues and Apply Processes" and
Table 3-1 "Apply Process Behavior for Transactional and Nontransactional Queues"
(captured LCRs always in source transactions; user-enqueued messages grouped by the
enqueuing transaction in a transactional queue, one at a time otherwise); seed
000_c58e7ef949d95dc2.txt "Execution Directives for Messages During Apply", "Enqueue
Destinations for Messages During Apply" (action contexts).  Built here:

* ``target.py``: the target database's contract, its name mapping, the low-watermark
  tables kept in it; ``pgtarget.py`` / ``sqlitetarget.py`` the two databases (the apply tag
  on PostgreSQL); ``targetdsn.py`` which one ``apply_database_link`` names;
* ``engine.py``: :class:`ApplyEngine` applies one source transaction as one target
  transaction with its low-watermark (exactly once), finds and reports conflicts, runs
  DML / DDL / message / precommit handlers and LCR.EXECUTE();
* ``conflicts.py``: the update conflict handlers (OVERWRITE, DISCARD, MAXIMUM, MINIMUM);
* ``settings.py``: the per-table settings in the catalog (key columns, instantiation
  SCNs, conflict column groups, DML handlers);
* ``errorqueue.py``: DBA_APPLY_ERROR, EXECUTE_ERROR, DELETE_ERROR;
* ``definition.py``: what running an apply process needs of its definition, and
  :func:`engine_for`;
* ``process.py``: :class:`ApplyProcess` dequeues under its rule sets (Table 6-1, action
  contexts), forms transactions per Table 3-1 and applies them;
* ``procedures.py``: :class:`ApplyProcedures`, DBMS_APPLY_ADM's per-table and error-queue
  procedures (``adm.py``, DBMS_APPLY_ADM's CREATE/ALTER/DROP_APPLY, inherits them).
"""

from .adm import ApplyAdm, apply_for_rules
from .definition import ApplyDefinition, engine_for
from .engine import ApplyEngine, ApplyError, Item, SourceTxn
from .procedures import ApplyProcedures
from .process import ApplyProcess

__all__ = ["ApplyAdm", "apply_for_rules", "ApplyDefinition", "ApplyEngine", "ApplyError", "ApplyProcedures", "ApplyProcess", "Item",
           "SourceTxn", "engine_for"]
