"""Lock keys and open-file-description locks, for what lives exactly as long as its holder:
the Streams process leases (:mod:`.leases`) and the session registry (:mod:`.sessions`).

An OFD lock (``F_OFD_SETLK``, Linux) belongs to the open file description, not to the
process as a POSIX record lock does: two descriptors of one process exclude each other,
and the kernel drops the lock when its descriptor closes -- with the process, if killed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import struct

__all__ = ["digest", "ofd_lock", "ofd_locked"]


def digest(*parts: str) -> int:
    """An unsigned 64-bit digest of ``parts``: the key of a lock named by them."""
    return int.from_bytes(hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest(), "big")


def _flock(lock_type: int, offset: int) -> bytes:
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks)
    return struct.pack("hhqqi4x", lock_type, os.SEEK_SET, offset, 1, 0)


def ofd_lock(fd: int, offset: int, lock_type: int) -> bool:
    """Take (``F_WRLCK``, ``F_RDLCK``) or give up (``F_UNLCK``) the open-file-description
    lock of descriptor ``fd`` on the byte at ``offset``, without waiting: False when
    another descriptor holds a conflicting lock."""
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock(lock_type, offset))
        return True
    except OSError:
        return False


def ofd_locked(fd: int, offset: int) -> bool:
    """Whether a descriptor other than ``fd`` holds a lock on the byte at ``offset`` (any
    process's, this one's too: an OFD lock belongs to its descriptor)."""
    answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _flock(fcntl.F_WRLCK, offset))
    return struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK
