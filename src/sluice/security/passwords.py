"""Passwords are kept only as salted scrypt hashes (``hashlib.scrypt``).

scrypt is memory-hard, so stolen hashes are expensive to brute-force; the cost
parameters are stored with each hash so they can be raised later without
invalidating existing users.
"""

from __future__ import annotations

import hashlib
import hmac
import os

_N, _R, _P, _LEN = 2**14, 8, 1, 32


def hash_password(password: str) -> dict:
    """A new salted hash of ``password`` (never the password itself)."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=_LEN)
    return {"scheme": "scrypt", "n": _N, "r": _R, "p": _P, "salt": salt.hex(), "hash": digest.hex()}


def verify_password(password: str, stored: dict) -> bool:
    """True if ``password`` matches ``stored`` (constant-time comparison)."""
    if stored.get("scheme") != "scrypt":
        return False
    digest = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(stored["salt"]),
                            n=stored["n"], r=stored["r"], p=stored["p"], dklen=len(stored["hash"]) // 2)
    return hmac.compare_digest(digest.hex(), stored["hash"])
