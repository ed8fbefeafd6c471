"""The local directories a pipeline writes (the warehouse, the checkpoints) or a report
reads, checked before Spark starts: Spark found a bad one only when the query started, as a
Java stack trace.  Paths of other file systems (``hdfs://``, ``s3a://`` ...) are Spark's to
check."""

from __future__ import annotations

import os

from ..errors import ora

__all__ = ["local_path", "check_directory", "check_run_directories", "has_parquet_files"]


def local_path(path: str) -> str | None:
    """``path`` on this machine's file system (a plain path or a ``file:`` URI), else None."""
    if path.startswith("file://"):
        return path.removeprefix("file://")
    if path.startswith("file:"):
        return path.removeprefix("file:")
    return None if "://" in path else path


def check_directory(path: str, what: str, write: bool = True) -> None:
    """Refuse a local directory the run cannot write (``write``: there and writable, or
    makeable -- its nearest existing ancestor a writable directory; ORA-29283) or a report
    cannot read (not there; ORA-29280).  Nothing is made here: Spark makes what it writes,
    so a run refused for another reason leaves nothing behind."""
    local = local_path(path)
    if local is None:
        return
    if not write:
        if not os.path.isdir(local):
            raise ora(29280, f"the {what} {path} is not a directory")
        return
    target = os.path.abspath(local)
    there = target
    while not os.path.exists(there):     # (a path below a file does not exist either)
        there = os.path.dirname(there)
    if not os.path.isdir(there):
        raise ora(29283, f"cannot make the {what} directory {path}: {there} is not a directory")
    if not os.access(there, os.W_OK | os.X_OK):
        raise ora(29283, f"the {what} directory {path} is not writable" if there == target
                  else f"cannot make the {what} directory {path}: {there} is not writable")


def check_run_directories(sink: str, checkpoint_dir: str, warehouse: str | None) -> None:
    """The directories a run of ``sink`` writes: its checkpoints, and the warehouse's."""
    check_directory(checkpoint_dir, "checkpoint")
    if sink == "warehouse" and warehouse:
        check_directory(warehouse, "warehouse")


def has_parquet_files(path: str) -> bool:
    """Whether a warehouse holds a Parquet file yet (one on another file system: assumed)."""
    local = local_path(path)
    return local is None or any(n.endswith(".parquet") for _, _, names in os.walk(local) for n in names)
