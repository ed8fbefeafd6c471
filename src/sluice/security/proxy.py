"""Proxy sessions: a middle tier connects once as itself and opens sessions as others.

Seed 004 "Database Sessions": the AQ servlet's super-user "creates sessions on
behalf of db_users"; each such user must have let it, with ``ALTER USER OE GRANT
CONNECT THROUGH AQADM`` (Example 17-26).  :func:`may_proxy` checks that consent;
:func:`sluice.connection.proxy_connect` opens the session, for any front door that acts
for other users (the IDAP servlet first of all).

The caller has authenticated the proxy user already (once, at start-up); the
session opened here is the client user's, with the client user's privileges
only — never the proxy's.
"""

from __future__ import annotations

from ..errors import ora
from .catalog import SecurityCatalog


def may_proxy(security: SecurityCatalog, proxy_user: str, client_user: str) -> None:
    """Check that ``proxy_user`` may open a session as ``client_user``.

    Allowed when the client granted CONNECT THROUGH the proxy, or when the proxy is
    an administrator (SYS, DBA, the bootstrap user), who could grant that itself.
    The client must exist and be allowed to log on.

    :raises DatabaseError: ORA-01017 (no such client user), ORA-28150 (no CONNECT
        THROUGH grant), ORA-01045 (the client lacks CREATE SESSION).
    """
    client = security.user(client_user)
    if client is None:
        raise ora(1017)
    proxy = security.user(proxy_user)
    if proxy is None:
        raise ora(1017)
    if not proxy.superuser and proxy_user not in security.proxies.get(client_user, set()):
        raise ora(28150, client_user)
    if not (client.superuser or "CREATE_SESSION" in client.system):
        raise ora(1045, client_user)
