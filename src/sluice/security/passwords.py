"""Passwords are kept only as salted scrypt hashes (``hashlib.scrypt``).

scrypt is memory-hard, so stolen hashes are expensive to brute-force; the cost
parameters are stored with each hash so they can be raised later without
invalidating existing users.
"""

from __future__ import annotations

import hashlib
import hmac
import os

# The cost of new hashes (scrypt's n, r, p; ~40 ms of CPU and 16 MB each here). The test
# suite lowers ``n`` for the hashes its own process makes (tests/conftest.py), as Django's
# test settings pick a fast hasher: it tests who may do what, not scrypt's cost.
COST = {"n": 2**14, "r": 8, "p": 1}
_LEN = 32


def hash_password(password: str) -> dict:
    """A new salted hash of ``password`` (never the password itself)."""
    salt = os.urandom(16)
    n, r, p = COST["n"], COST["r"], COST["p"]
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=_LEN)
    return {"scheme": "scrypt", "n": n, "r": r, "p": p, "salt": salt.hex(), "hash": digest.hex()}


def verify_password(password: str, stored: dict) -> bool:
    """True if ``password`` matches ``stored`` (constant-time comparison)."""
    if stored.get("scheme") != "scrypt":
        return False
    digest = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(stored["salt"]),
                            n=stored["n"], r=stored["r"], p=stored["p"], dklen=len(stored["hash"]) // 2)
    return hmac.compare_digest(digest.hex(), stored["hash"])
