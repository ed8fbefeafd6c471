"""Capture (wave 2, not built yet): turn committed changes of captured tables into LCRs
and enqueue them, in commit order, into the capture's ANYDATA queue.

Its job, from the seeds: a capture process evaluates its rule sets for every change
(seed 000_c58e7ef949d95dc2.txt, Table 6-2 "Types of Tasks and Rule Levels", "Capture with
a capture process"; rule conditions of Table 6-3 "System-Created Rule Conditions Created by
DBMS_STREAMS_ADM Package"), migrates rows under subset rules ("Row Migration During
Capture"), and stages LCRs in a queue (seed 001_0cd730aa595c4170.txt "Queues and Capture
Processes", "Queues and Synchronous Capture": captured LCRs buffered, synchronous
capture's persistent).  Sources per DESIGN.md section 7: PostgreSQL tables of the
store's own database; SQLite tables synchronously, through triggers.

It will decide with :func:`sluice.streams.evaluate_rule_sets`, build
:class:`sluice.streams.RowLCR` / :class:`~sluice.streams.DDLLCR`, enqueue through
:mod:`sluice.aq`, and advance its source position in the same transaction as the enqueue.
"""
