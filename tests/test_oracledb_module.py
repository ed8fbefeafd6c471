"""python-oracledb's module functions and data frames, as code written for python-oracledb
calls them after ``import sluice as oracledb``: makedsn() (the string python-oracledb
builds, refused by connect() with a word on Sluice's DSNs), init_oracle_client() /
is_thin_mode() / clientversion() (Sluice answers in Thin mode, and Connection.thin
agrees), Connection.fetch_df_all() / fetch_df_batches() (Arrow data frames)."""

import warnings

import pytest

import sluice as oracledb
from sluice import driver_mode
from tests.sqlhelpers import raised_code


# -- makedsn ----------------------------------------------------------------------------

def test_makedsn_builds_python_oracledb_connect_descriptor():
    assert oracledb.makedsn("dbhost", 1521, "orcl") == (
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=dbhost)(PORT=1521))(CONNECT_DATA=(SID=orcl)))")
    assert oracledb.makedsn("dbhost", 1521, service_name="orclpdb1") == (
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=dbhost)(PORT=1521))"
        "(CONNECT_DATA=(SERVICE_NAME=orclpdb1)))")
    # SERVICE_NAME wins over SID; REGION, SHARDING_KEY, SUPER_SHARDING_KEY follow in order
    assert oracledb.makedsn("h", "1522", sid="s", service_name="svc", region="r",
                            sharding_key="k", super_sharding_key="sk") == (
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=h)(PORT=1522))"
        "(CONNECT_DATA=(SERVICE_NAME=svc)(REGION=r)(SHARDING_KEY=k)(SUPER_SHARDING_KEY=sk)))")
    assert oracledb.makedsn("h", 1521) == (
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=h)(PORT=1521))(CONNECT_DATA=))")


@pytest.mark.parametrize("kw, name", [({"host": "h(x)"}, "host"), ({"sid": "a=b"}, "sid"),
                                      ({"service_name": "s)"}, "service_name"),
                                      ({"region": "("}, "region"), ({"sharding_key": "="}, "sharding_key"),
                                      ({"super_sharding_key": "x=1"}, "super_sharding_key")])
def test_makedsn_refuses_descriptor_syntax_in_arguments(kw, name):
    args = {"host": "h", "port": 1521, **kw}
    with pytest.raises(oracledb.ProgrammingError) as e:
        oracledb.makedsn(**args)
    assert str(e.value) == f'DPY-2020: "{name}" argument contains invalid values'
    assert e.value.full_code == "DPY-2020"


def test_makedsn_result_given_to_connect_names_sluice_dsns():
    dsn = oracledb.makedsn("dbhost", 1521, service_name="orclpdb1")
    with pytest.raises(oracledb.DatabaseError) as e:
        oracledb.connect(user="scott", password="tiger", dsn=dsn)
    assert e.value.full_code == "ORA-12154"
    assert "sqlite:///" in str(e.value) and "postgresql://" in str(e.value)


# -- driver mode ------------------------------------------------------------------------

@pytest.fixture
def fresh_client_init(monkeypatch):
    monkeypatch.setattr(driver_mode, "client_init", None)


def test_thin_mode_before_and_after_init_oracle_client(dsn, conn, fresh_client_init):
    assert oracledb.is_thin_mode() is True and conn.thin is True
    with pytest.warns(oracledb.IgnoredParameterWarning, match="init_oracle_client"):
        assert oracledb.init_oracle_client(lib_dir="/opt/oracle/instantclient_23_5",
                                           config_dir="/etc/tns", driver_name="app : 1.0") is None
    assert driver_mode.client_init == {"lib_dir": "/opt/oracle/instantclient_23_5", "config_dir": "/etc/tns",
                                       "error_url": None, "driver_name": "app : 1.0"}
    # one mode: is_thin_mode() and Connection.thin still agree, for old and new connections
    assert oracledb.is_thin_mode() is True and conn.thin is True
    with oracledb.connect(dsn) as other:
        assert other.thin is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        oracledb.init_oracle_client()          # called again: no second warning, no error
    assert driver_mode.client_init["lib_dir"] is None


def test_clientversion_in_thin_mode_is_dpy_2021(fresh_client_init):
    assert raised_code(oracledb.clientversion) == "DPY-2021"
    with pytest.warns(oracledb.IgnoredParameterWarning):
        oracledb.init_oracle_client()
    with pytest.raises(oracledb.ProgrammingError) as e:
        oracledb.clientversion()
    assert str(e.value).startswith("DPY-2021: init_oracle_client() must be called first\n")
    assert "Thin mode" in str(e.value)
