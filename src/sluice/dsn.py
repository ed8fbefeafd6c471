"""python-oracledb's ``makedsn()``: the connect descriptor an Oracle listener takes.

Kept so that python-oracledb (and cx_Oracle) code runs unchanged; the string it returns
names an Oracle listener, not a Sluice store, so ``sluice.connect(makedsn(...))`` ends
with ORA-12154 saying that a Sluice DSN is ``sqlite:///file.db`` or ``postgresql://…``
(:mod:`sluice.connect_params`)."""

from .errors import dpy


def _checked(name: str, value: str) -> str:
    """``(``, ``)`` and ``=`` would break the descriptor's syntax: DPY-2020."""
    if any(c in value for c in "()="):
        raise dpy(2020, name)
    return value


def makedsn(host: str, port: int, sid: str | None = None, service_name: str | None = None,
            region: str | None = None, sharding_key: str | None = None,
            super_sharding_key: str | None = None) -> str:
    """``(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=h)(PORT=p))(CONNECT_DATA=…))`` as
    python-oracledb builds it: SERVICE_NAME wins over SID, then REGION, SHARDING_KEY and
    SUPER_SHARDING_KEY, each only when given."""
    _checked("host", host)
    parts = []
    if service_name is not None:
        parts.append(f"(SERVICE_NAME={_checked('service_name', service_name)})")
    elif sid is not None:
        parts.append(f"(SID={_checked('sid', sid)})")
    for name, value in (("region", region), ("sharding_key", sharding_key),
                        ("super_sharding_key", super_sharding_key)):
        if value is not None:
            parts.append(f"({name.upper()}={_checked(name, value)})")
    return (f"(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST={host})(PORT={port}))"
            f"(CONNECT_DATA={''.join(parts)}))")
