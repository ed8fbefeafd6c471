"""Sluice users proving who they are over HTTP (Basic): the IDAP servlet's agents
(:mod:`sluice.idap.agents`) and the monitoring endpoints (``/metrics``, ``/dashboard``).

A user proves it with its stored password; a user without one (and SYS, which logs on
only AS SYSDBA) cannot authenticate over HTTP.  Verified credentials are remembered —
keyed by a keyed hash, never the password — until the user's stored password changes,
so scrypt runs once per user, not once per request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import threading
from typing import Callable

from ..errors import Error
from ..names import canonical
from .catalog import SecurityCatalog
from .passwords import verify_password

_CACHE_LIMIT = 10_000


def basic_credentials(header: str) -> tuple[str, str] | None:
    """(user, password) of an ``Authorization: Basic …`` header, or None."""
    if header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep and user else None


class PasswordCheck:
    """Verifies user name and password against a store's users (``security()``: its
    security catalog, read when asked, so a changed password counts at once)."""

    def __init__(self, security: Callable[[], SecurityCatalog]) -> None:
        self._security = security
        self._key = os.urandom(32)       # keys the hashes of verified passwords
        self._verified: dict[tuple[str, bytes], str] = {}
        self._lock = threading.Lock()

    def _lookup(self, username: str, password: str):
        """(user name, stored password hash, cache key), or None for a user that cannot
        authenticate over HTTP at all."""
        try:
            name = canonical(username, "user name")
        except Error:
            return None
        if name == "SYS":     # SYS logs on only AS SYSDBA, never over HTTP
            return None
        user = self._security().user(name)
        if user is None or not user.password:
            return None
        key = (name, hashlib.blake2b(password.encode("utf-8", "surrogatepass"), key=self._key,
                                     digest_size=32).digest())
        return name, user.password, key

    def authenticate_cached(self, username: str, password: str) -> str | None:
        """The user name when these credentials were verified before and the user's
        password has not changed since; None otherwise (fast: no scrypt)."""
        found = self._lookup(username, password)
        if found is None:
            return None
        name, stored, key = found
        return name if self._verified.get(key) == stored.get("hash") else None

    def authenticate(self, username: str, password: str) -> str | None:
        """The user name when ``username``/``password`` are a Sluice user's, else None
        (runs scrypt on a cache miss: call it from a worker thread)."""
        found = self._lookup(username, password)
        if found is None:
            return None
        name, stored, key = found
        if self._verified.get(key) == stored.get("hash"):
            return name
        if not verify_password(password, stored):
            return None
        with self._lock:
            if len(self._verified) >= _CACHE_LIMIT:
                self._verified.clear()
            self._verified[key] = stored.get("hash")
        return name
