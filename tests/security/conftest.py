"""Users for the security tests: created by the bootstrap administrator."""

import pytest

import sluice
from sluice.errors import DatabaseError

PASSWORD = "Pw-for-tests-1"


def create_user(admin, name, *grants):
    cur = admin.cursor()
    cur.execute(f"CREATE USER {name} IDENTIFIED BY \"{PASSWORD}\"")
    cur.execute(f"GRANT CREATE SESSION TO {name}")
    for g in grants:
        cur.execute(f"GRANT {g} TO {name}")


def code_of(call) -> int:
    """The ORA- number ``call`` raises."""
    with pytest.raises(DatabaseError) as e:
        call()
    return e.value.code


def login(dsn, name):
    return sluice.connect(dsn, user=name, password=PASSWORD)


@pytest.fixture
def admin(dsn):
    c = sluice.connect(dsn)
    yield c
    c.close()
