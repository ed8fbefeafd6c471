"""Issue 5, acceptance 3: passwords never appear in the store, logs or error messages."""

import glob
import logging

import pytest

import sluice
from click.testing import CliRunner
from sluice.cli import main

SECRET = "Zebra-Quartz-7731"


def _files_of(dsn):
    if dsn.startswith("sqlite:///"):
        base = dsn[len("sqlite:///"):].split("?")[0]
        return glob.glob(base + "*")
    return []


def _dump(admin):
    rows = []
    for view in ("dba_users", "aq$internet_users"):
        rows += admin.query(f"SELECT * FROM {view}", None)[1]
    return repr(rows)


def test_password_is_only_stored_as_a_salted_hash(admin, dsn, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    cur = admin.cursor()
    cur.execute(f"CREATE USER carol IDENTIFIED BY {SECRET}")
    cur.execute("GRANT CREATE SESSION TO carol")
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", f"ALTER USER carol IDENTIFIED BY {SECRET}2"])
    assert r.exit_code == 0
    with sluice.connect(dsn, user="carol", password=SECRET + "2"):
        pass
    messages = []
    for attempt in (SECRET, SECRET + "x"):
        with pytest.raises(sluice.DatabaseError) as e:
            sluice.connect(dsn, user="carol", password=attempt)
        messages.append(str(e.value))
    with pytest.raises(sluice.DatabaseError) as e:
        cur.execute(f"CREATE USER carol IDENTIFIED BY {SECRET}")      # duplicate user
    messages.append(str(e.value))
    catalog = repr(admin.query("SELECT * FROM SLUICE_CATALOG", None)[1])
    assert "scrypt" in catalog and SECRET not in catalog
    admin.close()
    for path in _files_of(dsn):
        data = open(path, "rb").read()
        assert SECRET.encode() not in data, path
        assert SECRET.encode("utf-16-le") not in data, path
    out = capsys.readouterr()
    for text in messages + [caplog.text, out.out, out.err, r.output]:
        assert SECRET not in text


def test_users_view_shows_no_password(admin):
    admin.cursor().execute(f"CREATE USER dave IDENTIFIED BY {SECRET}")
    assert SECRET not in _dump(admin)
    cols = admin.query("SELECT * FROM dba_users", None)[0]
    assert not any("PASSWORD" in c or "HASH" in c for c in cols)


def test_the_product_hashes_at_scrypt_n_2_14_and_a_hash_is_checked_with_its_own_cost():
    """The suite makes its users' hashes cheaper (tests/conftest.py): the product's cost stays
    scrypt n=2**14, r=8, p=1, and a hash made at one cost is checked at that cost."""
    from sluice.security import passwords
    from tests.conftest import PRODUCT_PASSWORD_COST

    assert PRODUCT_PASSWORD_COST == {"n": 2**14, "r": 8, "p": 1}
    cheap = passwords.hash_password(SECRET)
    saved = dict(passwords.COST)
    try:
        passwords.COST.update(PRODUCT_PASSWORD_COST)
        dear = passwords.hash_password(SECRET)
        assert (dear["n"], dear["r"], dear["p"]) == (2**14, 8, 1)
        assert passwords.verify_password(SECRET, cheap) and passwords.verify_password(SECRET, dear)
        assert not passwords.verify_password(SECRET + "x", dear)
    finally:
        passwords.COST.clear()
        passwords.COST.update(saved)
