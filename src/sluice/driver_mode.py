"""python-oracledb's driver mode: ``is_thin_mode()``, ``init_oracle_client()``,
``clientversion()``.

Sluice has one mode and it loads no Oracle Client, so it answers as python-oracledb's
Thin mode throughout: ``is_thin_mode()`` is always True, as ``Connection.thin`` is.
``init_oracle_client()`` is accepted (python-oracledb code calls it before connecting
and must go on), recorded in :data:`client_init`, and warned about once; it does not
switch to a Thick mode Sluice does not have.  ``clientversion()`` is therefore what
Thin mode gives: DPY-2021 (see docs/DESIGN-NOTES.md, "python-oracledb module
functions")."""

import warnings
from typing import Any

from .connect_params import IgnoredParameterWarning
from .errors import dpy

# the arguments of the last init_oracle_client() call (None: never called)
client_init: dict[str, Any] | None = None


def is_thin_mode() -> bool:
    """python-oracledb's: True -- Sluice never uses Oracle Client libraries."""
    return True


def init_oracle_client(lib_dir: str | None = None, config_dir: str | None = None,
                       error_url: str | None = None, driver_name: str | None = None) -> None:
    """python-oracledb's: accepted and recorded; Sluice stays in Thin mode (a warning
    says so, once per process)."""
    global client_init
    first = client_init is None
    client_init = {"lib_dir": lib_dir, "config_dir": config_dir, "error_url": error_url,
                   "driver_name": driver_name}
    if first:
        warnings.warn("sluice: init_oracle_client() loads no Oracle Client: Sluice stays in "
                      "python-oracledb's Thin mode (is_thin_mode() is True)",
                      IgnoredParameterWarning, stacklevel=2)


def clientversion() -> tuple[int, int, int, int, int]:
    """python-oracledb's: Thin mode has no client library, so DPY-2021 (as python-oracledb
    raises before ``init_oracle_client()``), with a line saying why."""
    err = dpy(2021)
    raise type(err)(f"{err}\nSluice runs in Thin mode only: init_oracle_client() loads no "
                    "Oracle Client, so there is no client version", 2021, prefix="DPY")
