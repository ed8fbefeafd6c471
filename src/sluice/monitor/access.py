"""Who may read the monitoring endpoints (``/metrics`` of ``sluice serve`` and ``sluice
run``, and the dashboard): a Sluice user proving itself with HTTP Basic, as the servlet's
agents do (:mod:`sluice.security.httpauth`), that holds the MONITOR system privilege
(``GRANT MONITOR TO u``; SELECT_CATALOG_ROLE gives it) or is an administrator."""

from __future__ import annotations

from typing import Any

from ..security.authorize import Authorizer
from ..security.httpauth import PasswordCheck, basic_credentials

UNAUTHORIZED, FORBIDDEN, OK = 401, 403, 200
REALM = "Sluice monitoring"


class MonitorAccess:
    """Checks ``Authorization`` headers against the users of ``conn``'s store."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.passwords = PasswordCheck(lambda: conn.context.security)

    def check(self, authorization: str | None, cached_only: bool = False) -> tuple[int, str | None]:
        """(200, user) when the header names a user with MONITOR; (401, None) without valid
        credentials — or, with ``cached_only``, when they were not verified before (then
        ask again without it, off the event loop: scrypt is slow); (403, user) without the
        privilege."""
        creds = basic_credentials(authorization or "")
        if creds is None:
            return UNAUTHORIZED, None
        user = self.passwords.authenticate_cached(*creds)
        if user is None and not cached_only:
            user = self.passwords.authenticate(*creds)
        if user is None:
            return UNAUTHORIZED, None
        if not Authorizer(self._conn.context.security, user).has_system("MONITOR"):
            return FORBIDDEN, user
        return OK, user


def refusal(status: int) -> tuple[str, list[tuple[str, str]]]:
    """The text and headers of a 401 / 403 answer."""
    if status == UNAUTHORIZED:
        return ("401 Unauthorized: HTTP Basic credentials of a Sluice user with MONITOR required\n",
                [("WWW-Authenticate", f'Basic realm="{REALM}"')])
    return "403 Forbidden: the MONITOR privilege (or SELECT_CATALOG_ROLE) is required\n", []
