"""Security: database users, AQ agents, privileges, secure queues.

Seeds 001/002 "Secure Queues", 003 "System-Level / Queue-Level Access Control" and
004 "Authorizing Users" are the spec.  Every front door (Python API, statements,
CLI, IDAP) reaches queues through the AQ layer, which asks :mod:`.authorize` — the
one enforcement point — before it enqueues, dequeues or administers anything.
"""

from .authorize import Authorizer
from .catalog import SecurityCatalog

__all__ = ["Authorizer", "SecurityCatalog"]
