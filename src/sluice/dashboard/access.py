"""Who may look at the dashboard, and who may act on it.

**Looking** is what ``/metrics`` asks too (:class:`sluice.monitor.access.MonitorAccess`, the
servlet's, one for both): HTTP Basic with a Sluice user's name and password (scrypt once,
then a keyed-hash cache), and the MONITOR system privilege — which SELECT_CATALOG_ROLE,
what Oracle's Enterprise Manager users hold to see the V$ and DBA_ views, gives too — or a
superuser.  Every dashboard URL — the page, its scripts, the JSON — needs both.

**Acting** (EXECUTE_ERROR, DELETE_ERROR) is done on a proxy session *as the HTTP user*
(:func:`sluice.connection.proxy_connect`), so DBMS_APPLY_ADM's own check decides, as it
does for the same call in ``sluice sql`` — no second, possibly different, rule here.  A
browser sends Basic credentials to any site that makes it post to us, so a write also
needs the CSRF token of the page the user loaded: an HMAC of the user name under a key
that lives only in this server process, sent back in the ``X-CSRF-Token`` header (which a
cross-site form cannot set).
"""

from __future__ import annotations

import hashlib
import hmac
import os


CSRF_HEADER = "x-csrf-token"


class CsrfTokens:
    """Per-user tokens under a key of this process (a restart invalidates open pages:
    they are told to reload)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or os.urandom(32)

    def token(self, user: str) -> str:
        return hmac.new(self._key, user.encode("utf-8"), hashlib.sha256).hexdigest()

    def valid(self, user: str, presented: str | None) -> bool:
        # compare_digest refuses str with non-ASCII characters (a TypeError): compare bytes
        return bool(presented) and hmac.compare_digest(
            self.token(user).encode("ascii"), presented.encode("utf-8", "surrogateescape"))
