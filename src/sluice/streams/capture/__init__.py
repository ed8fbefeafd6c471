"""Capture: Oracle Streams capture processes over a PostgreSQL source.

A capture process turns committed changes of captured tables into LCRs and enqueues
those its rule sets accept, in commit order, into its ANYDATA queue (seed
001_0cd730aa595c4170.txt "Queues and Capture Processes"; rules per seed
000_c58e7ef949d95dc2.txt Table 6-1 and Table 6-2 "Types of Tasks and Rule Levels",
"Capture with a capture process").  Built here, per DESIGN.md section 7:

* ``DBMS_CAPTURE_ADM`` (:class:`CaptureAdm`, ``conn.capture_adm``; ``adm.py``) creates,
  starts, stops, alters and drops them (one wal2json replication slot each);
  :func:`capture_for_rules` is the capture a ``DBMS_STREAMS_ADM.ADD_*_RULES`` with
  ``streams_type => 'capture'`` creates implicitly (:mod:`sluice.streams.rulegen`);
* :class:`CaptureProcess` (``process.py``) runs one: logical decoding through the slot
  (``pgsource.py``), wal2json rows and DDL messages to :class:`sluice.streams.RowLCR` /
  :class:`~sluice.streams.DDLLCR` (``decode.py``), :func:`sluice.streams.evaluate_rule_sets`
  with Oracle's prefilter (``prefilter.py``), the LCRs enqueued through :mod:`sluice.aq`
  and the source position advanced in the same store transaction (exactly once) — or,
  with SET_PARAMETER 'STAGING' = 'BUFFERED' (``staging.py``), the LCRs buffered and the
  slot confirmed once consumers committed what they took;
* ``DBMS_STREAMS`` (:class:`DbmsStreams`, ``conn.streams``; ``tags.py``) holds the
  session's tag; :func:`tag_transaction` / :func:`emit_tag` write it into a source
  transaction;
* ``spec.py`` is a capture's catalog row; ``context.py`` what capture gets from a session
  (over :class:`sluice.context.SessionContext`).

* synchronous capture (``sync.py``: CREATE_SYNC_CAPTURE, ALTER_SYNC_CAPTURE,
  :func:`sync_capture_for_rules` for ADD_TABLE_RULES / ADD_SUBSET_RULES with
  ``streams_type => 'sync_capture'``): triggers on the captured tables, SQLite
  (``syncsqlite.py``) and PostgreSQL (``syncpg.py``), evaluate the rules in SQL
  (``syncrules.py``) and enqueue the row LCRs in the changing transaction; the
  captured tables follow the rule set (DBMS_RULE_ADM's hooks); subset rules migrate rows
  there ("Row Migration During Capture").

Subset rules migrate rows as capture processes capture them too ("Row Migration During
Capture", :func:`sluice.streams.rowmigration.migrate`).
"""

from ...rules.adm import RULE_SET_CHANGED, RULE_SET_CHECKS
from .adm import CaptureAdm, capture_for_rules
from .pgsource import emit_tag
from .process import CaptureProcess
from .sync import check_rule_set_change, refresh_rule_set, sync_capture_for_rules
from .tags import DbmsStreams, tag_transaction

__all__ = ["CaptureAdm", "CaptureProcess", "DbmsStreams", "capture_for_rules", "emit_tag",
           "sync_capture_for_rules", "tag_transaction"]

# a synchronous capture's triggers follow its rule set (sluice.rules.adm's hooks)
if check_rule_set_change not in RULE_SET_CHECKS:
    RULE_SET_CHECKS.append(check_rule_set_change)
if refresh_rule_set not in RULE_SET_CHANGED:
    RULE_SET_CHANGED.append(refresh_rule_set)
