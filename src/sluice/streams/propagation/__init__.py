"""Propagation: move messages and LCRs from a source queue to destination queues, local
or at another site, under propagation rules and schedules.

Its job, from the seeds: seed 001_0cd730aa595c4170.txt "Message Propagation Between
Queues", "Propagation Rules", "Queue-to-Queue Propagations", "Ensured Message Delivery"
(a message leaves the source only once the destination has committed it), "Directed
Networks", "Queue Forwarding and Apply Forwarding", "Propagation Jobs"; seed
003_2d8b77b6a147e3d3.txt "Propagation Features", "Propagation Scheduling" (windows),
"Propagation Error Handling" (the back-off: first retry after 30 s, then 60 s, 120 s …;
after 16 failures the schedule is disabled), "Propagation Statistics", "Propagation to
Remote Subscribers"; seed 004_d2b4a38b1b332915.txt "Using HTTP and HTTPS for Oracle
Streams AQ Propagation" (destinations behind ``/aqserv/servlet/AQPropServlet``).

A schedule is a catalog row run by :mod:`sluice.streams.host`; rule sets are evaluated
by :func:`sluice.streams.evaluate_rule_sets` ("Row Migration During Propagation" for
subset rules); the destination's de-duplication record advances in the same transaction
as the enqueue there (exactly once, DESIGN.md section 7).

The modules: ``links.py`` database links (CREATE/DROP DATABASE LINK, encrypted
passwords, DBA_DB_LINKS); ``spec.py`` a propagation's catalog row (DBA_PROPAGATION);
``schedules.py`` schedules, windows, back-off, statistics and the DBMS_AQADM schedule
procedures (DBA_QUEUE_SCHEDULES), with ``nexttime.py`` the calendar NEXT_TIMEs (TRUNC(SYSDATE)
…); ``adm.py`` DBMS_PROPAGATION_ADM (``conn.propagation_adm``),
``conn.aqadm`` with the schedule procedures, and :func:`propagation_for_rules` for
DBMS_STREAMS_ADM.ADD_*_PROPAGATION_RULES.
"""

from .adm import DbmsAqadm, PropagationAdm, propagation_for_rules
from .links import create_link, drop_link

__all__ = ["DbmsAqadm", "PropagationAdm", "create_link", "drop_link", "propagation_for_rules"]
