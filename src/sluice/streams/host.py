"""The process host (wave 2, not built yet): runs the enabled Streams processes of a site.

DESIGN.md section 7, "Processes": capture processes, propagation schedules, apply
processes, notification dispatch and the time manager are rows in the catalog plus code;
one host (``sluice run``, or in-process for tests) runs the enabled ones, each exactly
once across hosts (leases in the store), restarts them on failure, and obeys the
DBMS_* procedures -- which only change catalog state -- within a second.  The seeds'
counterparts: seed 003_2d8b77b6a147e3d3.txt "Queue Monitor Coordinator" (the background
processes of AQ) and seed 001_0cd730aa595c4170.txt "Propagation Jobs", "Propagation
Scheduling and Oracle Streams Propagations".

Today the time manager (:mod:`sluice.store.timemgr`) and the notification dispatcher
(:mod:`sluice.aq.notify.dispatcher`) start on their own with a store; this module will
host them together with :mod:`sluice.streams.capture`, :mod:`sluice.streams.propagation`
and :mod:`sluice.streams.apply`.
"""
