"""python-oracledb's module functions and data frames, as code written for python-oracledb
calls them after ``import sluice as oracledb``: makedsn() (the string python-oracledb
builds, refused by connect() with a word on Sluice's DSNs), init_oracle_client() /
is_thin_mode() / clientversion() (Sluice answers in Thin mode, and Connection.thin
agrees), Connection.fetch_df_all() / fetch_df_batches() (Arrow data frames)."""

import asyncio
import datetime
import warnings
from decimal import Decimal

import pyarrow as pa
import pytest

import sluice as oracledb
from sluice import driver_mode
from tests.sqlhelpers import query_rows, raised_code


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


# -- data frames ------------------------------------------------------------------------

EXPECTED_TYPES = {
    "N": pa.float64(), "I": pa.int64(), "P": pa.float64(), "B18": pa.int64(), "B19": pa.float64(),
    "V": pa.large_string(), "CH": pa.large_string(), "D": pa.timestamp("s"),
    "TS": pa.timestamp("us"), "R": pa.large_binary(), "CL": pa.large_string(), "BL": pa.large_binary(),
}


@pytest.fixture
def typed(conn):
    cur = conn.cursor()
    cur.execute("create table df_t (n number, i number(9), p number(10,2), b18 number(18), b19 number(19), "
                "v varchar2(20), ch char(3), d date, ts timestamp, r raw(10), cl clob, bl blob)")
    cur.execute("insert into df_t values (1.5, 7, 3.25, 123456789012345678, 1234567890123456789, 'x', 'ab', "
                "date '2024-02-29', timestamp '2024-02-29 10:11:12.345678', hextoraw('ff00'), "
                "'a clob', hextoraw('aa'))")
    cur.execute("insert into df_t (i, v) values (8, null)")
    conn.commit()
    return conn


def test_fetch_df_all_maps_oracle_types_to_arrow(typed):
    df = typed.fetch_df_all("select * from df_t order by i")
    assert df.column_names() == list(EXPECTED_TYPES)
    assert (df.num_rows(), df.num_columns()) == (2, len(EXPECTED_TYPES))
    table = pa.table(df)                      # the Arrow PyCapsule stream interface
    assert {f.name: f.type for f in table.schema} == EXPECTED_TYPES
    first = {k: v[0] for k, v in table.to_pydict().items()}
    # CHAR(3)'s value is what the cursor fetches ('ab ' on PostgreSQL, 'ab' on SQLite today)
    assert first.pop("CH") == query_rows(typed, "select ch from df_t where i = 7")[0][0]
    assert first == {"N": 1.5, "I": 7, "P": 3.25, "B18": 123456789012345678,
                     "B19": float(1234567890123456789), "V": "x",
                     "D": datetime.datetime(2024, 2, 29), "TS": datetime.datetime(2024, 2, 29, 10, 11, 12, 345678),
                     "R": b"\xff\x00", "CL": "a clob", "BL": b"\xaa"}
    assert table.column("V").to_pylist() == ["x", None] and table.column("I").to_pylist() == [7, 8]
    # the columns: the Arrow array interface, names, null counts
    column = df.get_column_by_name("V")
    assert column is df.get_column(5) and column.name == "V" and column.null_count == 1
    assert len(column) == column.num_rows == 2 and column.dtype == "large_string"
    assert pa.array(column).to_pylist() == ["x", None]
    assert [c.name for c in df.column_arrays()] == list(EXPECTED_TYPES)
    assert isinstance(df, oracledb.DataFrame) and isinstance(column, oracledb.ArrowArray)
    with pytest.raises(IndexError):
        df.get_column(len(EXPECTED_TYPES))
    with pytest.raises(KeyError):
        df.get_column_by_name("NOPE")


def test_fetch_df_all_binds_and_expressions(conn):
    df = conn.fetch_df_all("select :v + 1 as a, 'k' || :w as b from dual", [41, "ing"], arraysize=10)
    assert pa.table(df).to_pydict() == {"A": [42.0], "B": ["king"]}
    assert pa.table(df).schema.field("A").type == pa.float64()   # an expression: no precision
    assert pa.table(conn.fetch_df_all("select :x as c from dual", {"x": "y"})).to_pydict() == {"C": ["y"]}


def test_fetch_df_batches_gives_size_rows_each(typed):
    cur = typed.cursor()
    cur.executemany("insert into df_t (i, v) values (:1, :2)", [(n, f"v{n}") for n in range(10, 15)])
    typed.commit()
    batches = list(typed.fetch_df_batches("select i, v from df_t where i >= :lo order by i", [8], size=4))
    assert [b.num_rows() for b in batches] == [4, 2]
    assert [pa.table(b).column("I").to_pylist() for b in batches] == [[8, 10, 11, 12], [13, 14]]
    assert all(b.column_names() == ["I", "V"] for b in batches)
    assert raised_code(lambda: list(typed.fetch_df_batches("select i from df_t", size=0))) == "DPY-2045"


def test_fetch_df_with_no_rows_is_one_empty_frame(typed):
    assert typed.fetch_df_all("select i, v from df_t where 1 = 0").num_rows() == 0
    batches = list(typed.fetch_df_batches("select i, v from df_t where 1 = 0"))
    assert len(batches) == 1 and batches[0].num_rows() == 0
    assert batches[0].column_names() == ["I", "V"]


def test_fetch_df_requested_schema_names_and_types_columns(typed):
    schema = pa.schema([("col_1", pa.int16()), ("V", pa.string())])
    df = typed.fetch_df_all("select i, v from df_t order by i", requested_schema=schema)
    table = pa.table(df)
    assert table.schema == schema and table.to_pydict() == {"col_1": [7, 8], "V": ["x", None]}
    with pytest.raises(oracledb.ProgrammingError) as e:
        typed.fetch_df_all("select i from df_t", requested_schema=schema)
    assert str(e.value) == "DPY-2069: requested schema has 2 columns defined but 1 are being fetched"
    assert raised_code(typed.fetch_df_all, "select v from df_t where i = 7",
                       requested_schema=pa.schema([("V", pa.int64())])) == "DPY-3038"


def test_fetch_df_refuses_what_arrow_cannot_hold(conn):
    assert raised_code(conn.fetch_df_all, "select interval '1' day as iv from dual") == "DPY-3030"
    cur = conn.cursor()
    cur.execute("create table df_u (x number)")
    assert raised_code(conn.fetch_df_all, "insert into df_u values (1)") == "DPY-1003"


def test_fetch_df_on_the_asyncio_connection(dsn):
    async def main():
        async with oracledb.connect_async(dsn) as conn:
            df = await conn.fetch_df_all("select 1 as a from dual")
            batches = [b async for b in conn.fetch_df_batches(
                "select level as l from dual connect by level <= 3", size=2)]
            return pa.table(df).to_pydict(), [pa.table(b).column("L").to_pylist() for b in batches]
    assert asyncio.run(main()) == ({"A": [1.0]}, [[1.0, 2.0], [3.0]])


def test_fetch_df_decimals_and_no_output_type_handler(typed, monkeypatch):
    typed.outputtypehandler = lambda cursor, metadata: cursor.var(
        metadata.type_code, arraysize=cursor.arraysize, outconverter=lambda value: -1)
    assert query_rows(typed, "select i from df_t where i = 7") == [(-1,)]   # the handler works...
    assert pa.table(typed.fetch_df_all("select i from df_t where i = 7")).to_pydict() == {"I": [7]}  # ...not here
    monkeypatch.setattr(oracledb.defaults, "fetch_decimals", True)
    table = pa.table(typed.fetch_df_all("select p, i, n from df_t where i = 7"))
    assert table.schema.field("P").type == pa.decimal128(10, 2)
    assert table.schema.field("I").type == pa.decimal128(9, 0)
    assert table.schema.field("N").type == pa.float64()       # no declared precision
    assert table.to_pydict() == {"P": [Decimal("3.25")], "I": [Decimal(7)], "N": [1.5]}
