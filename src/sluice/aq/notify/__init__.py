"""Asynchronous notifications (seed 003 "Asynchronous Notifications").

``registration`` keeps who wants to hear about which queue and how; ``register`` makes
and drops registrations (python-oracledb's ``conn.subscribe`` and PL/SQL's
``DBMS_AQ.REGISTER``); the enqueuing transaction writes what it owes into the store's
notification outbox; ``dispatcher`` leases it and hands it to ``lanes`` (each
registration's deliveries in order, registrations side by side on a few threads) —
``channels`` knows the ways: a Python callback, an HTTP POST, mail, a PL/SQL-style
procedure.  Imports go one way: register -> dispatcher -> lanes, channels -> registration.
"""
