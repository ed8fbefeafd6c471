"""Asynchronous notifications (seed 003 "Asynchronous Notifications").

``registration`` keeps who wants to hear about which queue and how; ``register`` makes
and drops registrations (python-oracledb's ``conn.subscribe`` and PL/SQL's
``DBMS_AQ.REGISTER``); the enqueuing transaction writes what it owes into the store's
notification outbox; ``dispatcher`` delivers it — ``channels`` knows the ways: a Python
callback, an HTTP POST, mail, a PL/SQL-style procedure.  Imports go one way:
register -> dispatcher -> channels -> registration.
"""
