"""A new SQLite store's file written whole from a prepared image of its catalog.

Sending a new file the catalog's DDL (catalog_ddl: ~135 statements, each compiled and
written through the WAL) took ~37 ms of the ~47 ms a new store cost on this VM's ext4 disk.
The image -- the same DDL run once per process and SCHEMA_VERSION into an in-memory
database, serialized -- is written into an unnamed file in the store's directory
(``O_TMPFILE``), flushed, and given the store's name with link(2), which fails when the
name exists: the file appears complete or not at all, and a file another process created
meanwhile (by this route or by the DDL) is never written over -- that process's store is
opened as it is.  A new store holds no value of its own in its catalog (two stores made by
the DDL have identical rows: tests/store/test_store_image.py), so nothing is written after
the copy.  An empty file already there (``touch``, or another process's connection that has
not written yet), a store of an older schema version, a filesystem without ``O_TMPFILE``
or a failing write take the DDL route, under ``BEGIN IMMEDIATE``, as before.
"""

from __future__ import annotations

import os
import sqlite3

from .dialect import SQLITE
from .sqlschema import SCHEMA_VERSION, catalog_ddl

_images: dict[int, bytes] = {}

# bytes 18 and 19 of an SQLite file's header, its write and read format versions: 2 is WAL
# (the journal mode every store connection sets, so the file is born in it)
_WAL_FORMAT = 2


def catalog_image() -> bytes:
    """The bytes of a store file holding the whole catalog of this SCHEMA_VERSION and
    nothing else, in WAL mode (built on first use in this process; no lock held while it is
    built -- a fork then leaves none locked -- so two threads at first use build it twice)."""
    image = _images.get(SCHEMA_VERSION)
    if image is None:
        mem = sqlite3.connect(":memory:", isolation_level=None)
        try:
            mem.execute("BEGIN")
            for stmt in catalog_ddl(SQLITE):
                mem.execute(stmt)
            mem.execute("COMMIT")
            data = bytearray(mem.serialize())
        finally:
            mem.close()
        data[18] = data[19] = _WAL_FORMAT
        image = _images.setdefault(SCHEMA_VERSION, bytes(data))
    return image


def create(path: str, durable: bool = True) -> bool:
    """Make the store file ``path`` from :func:`catalog_image` when no file of that name
    exists: True when this call made it.  False -- nothing done, the caller sends the DDL
    as for any file -- when the name exists (or came to exist meanwhile), or anything
    refused the route (no such directory, no ``O_TMPFILE``, a full disk: the DDL route
    reports it as it always did).  ``durable``: flushed to the device before it is named,
    so a named file is never a partly written one after a power loss."""
    if os.path.lexists(path):
        return False
    try:
        image = catalog_image()
        fd = os.open(os.path.dirname(path) or ".", os.O_TMPFILE | os.O_WRONLY, 0o644)
    except OSError:
        return False
    try:
        view = memoryview(image)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
        proc = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)   # this process's, now
        try:    # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N: names the unnamed file, never replaces
            os.link(str(fd), path, src_dir_fd=proc, follow_symlinks=True)
        finally:
            os.close(proc)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


__all__ = ["catalog_image", "create"]
