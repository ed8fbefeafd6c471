"""A new SQLite store written whole from the catalog's image (store/sqliteimage.py) is the
store the catalog's DDL makes, and two processes creating one file at once share one store."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

import sluice
from sluice.store import sqliteimage
from sluice.store.sqlschema import SCHEMA_VERSION

PRAGMAS = ("user_version", "application_id", "journal_mode", "page_size", "auto_vacuum", "encoding",
           "freelist_count")


def dump(path) -> dict:
    """What a store file holds: its header's settings, every sqlite_master entry with its SQL
    text, every table's rows."""
    c = sqlite3.connect(path)
    try:
        out = {p: c.execute(f"PRAGMA {p}").fetchone()[0] for p in PRAGMAS}
        master = c.execute("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master "
                           "ORDER BY type, name").fetchall()
        out["sqlite_master"] = master
        out["rows"] = {name: sorted(c.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
                       for kind, name, *_ in master if kind == "table"}
        out["integrity"] = c.execute("PRAGMA integrity_check").fetchall()
        return out
    finally:
        c.close()


def by_ddl(monkeypatch) -> None:
    """Stores made as before the image: the DDL sent statement by statement."""
    monkeypatch.setattr(sqliteimage, "create", lambda path, durable=True: False)


def test_a_store_made_from_the_image_is_the_store_the_ddl_makes(tmp_path, monkeypatch):
    with sluice.connect(f"sqlite:///{tmp_path / 'image.db'}"):
        pass
    with monkeypatch.context() as m:
        by_ddl(m)
        with sluice.connect(f"sqlite:///{tmp_path / 'ddl.db'}"):
            pass
    image, ddl = dump(tmp_path / "image.db"), dump(tmp_path / "ddl.db")
    assert len(image["sqlite_master"]) > 100
    assert image == ddl
    assert image["journal_mode"] == "wal" and image["integrity"] == [("ok",)]
    assert dict(image["rows"]["SLUICE_META"])["schema_version"] == str(SCHEMA_VERSION)


def test_a_new_store_from_the_image_works_and_opens_again(tmp_path):
    dsn = f"sqlite:///{tmp_path / 'new.db'}"
    with sluice.connect(dsn) as conn:
        assert conn.query("SELECT DUMMY FROM DUAL", None)[1] == [("X",)]
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name="Q", queue_table="QT")
        conn.aqadm.start_queue(queue_name="Q")
        conn.queue("Q").enqone(conn.msgproperties(payload=b"one"))
        conn.commit()
    with sluice.connect(dsn) as conn:
        assert conn.queue("Q").deqone().payload == b"one"
        conn.commit()
        assert conn.query("SELECT COUNT(*) FROM DBA_QUEUES WHERE NAME = 'Q'", None)[1] == [(1,)]
    assert dump(tmp_path / "new.db")["integrity"] == [("ok",)]


def test_the_image_never_replaces_a_file_made_meanwhile(tmp_path, monkeypatch):
    """A file another process made between the look for it and the copy (here: the look
    made to miss it) keeps what it holds."""
    path = tmp_path / "taken.db"
    with sluice.connect(f"sqlite:///{path}") as conn:
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
    before = dump(path)
    monkeypatch.setattr(sqliteimage.os.path, "lexists", lambda p: False)
    assert sqliteimage.create(str(path)) is False
    assert dump(path) == before
    empty = tmp_path / "empty.db"
    empty.touch()
    assert sqliteimage.create(str(empty)) is False and empty.stat().st_size == 0


def test_an_empty_file_is_sent_the_ddl(tmp_path):
    path = tmp_path / "touched.db"
    path.touch()
    with sluice.connect(f"sqlite:///{path}") as conn:
        assert conn.query("SELECT COUNT(*) FROM DBA_QUEUES", None)[1] == [(0,)]
    fresh = tmp_path / "fresh.db"
    with sluice.connect(f"sqlite:///{fresh}"):
        pass
    assert dump(path) == dump(fresh)


CREATOR = textwrap.dedent("""
    import sys
    import sluice
    path, name = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    sys.stdin.readline()          # every creator imported: go together
    with sluice.connect(f"sqlite:///{path}") as conn:
        conn.aqadm.create_queue_table(queue_table=name + "_QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name=name, queue_table=name + "_QT")
        conn.aqadm.start_queue(queue_name=name)
        conn.queue(name).enqone(conn.msgproperties(payload=name.encode()))
        conn.commit()
""")


@pytest.mark.parametrize("empty", [False, True], ids=["absent", "empty"])
def test_processes_creating_one_new_store_at_once_share_it(tmp_path, empty):
    path = tmp_path / "raced.db"
    if empty:
        path.touch()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    names = [f"P{i}" for i in range(3)]
    procs = [subprocess.Popen([sys.executable, "-c", CREATOR, str(path), name], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name in names]
    for p in procs:
        assert p.stdout.readline() == "ready\n", p.communicate(timeout=60)[1]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with sluice.connect(f"sqlite:///{path}") as conn:
        assert sorted(r[0] for r in conn.query("SELECT NAME FROM DBA_QUEUES WHERE QUEUE_TYPE = 'NORMAL_QUEUE'",
                                               None)[1]) == names
        for name in names:
            assert conn.queue(name).deqone().payload == name.encode()
        conn.commit()
    assert dump(path)["integrity"] == [("ok",)]
