"""Monitoring: one snapshot of a store's queues and Streams processes (:mod:`.snapshot`),
and what shows it — Prometheus metrics (:mod:`.prometheus`), ``sluice top``
(:mod:`.top`).  Beside the front doors: it reads through a session, never the other way."""
