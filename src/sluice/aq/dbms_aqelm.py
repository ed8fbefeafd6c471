"""``DBMS_AQELM``: the mail settings of e-mail notifications (SET_MAILHOST, SET_MAILPORT,
SET_SENDFROM and their GET_ functions), kept as catalog facts (kind ``CONFIG``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InterfaceError

if TYPE_CHECKING:
    from ..connection import Connection


class DbmsAqelm:
    def __init__(self, conn: "Connection") -> None:
        self._session_ctx = conn.context

    def _set(self, key: str, value) -> None:
        self._session_ctx.authz.check_aq_administrator()
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object("CONFIG", "SYS", key, {"value": value}, replace=True)

    def _get(self, key: str):
        for owner, name, spec in self._session_ctx.store.catalog_objects("CONFIG"):
            if owner == "SYS" and name == key:
                return spec.get("value")
        return None

    def set_mailhost(self, mailhost: str) -> None:
        if not isinstance(mailhost, str) or not mailhost.strip():
            raise InterfaceError("mailhost must be a host name")
        self._set("MAILHOST", mailhost.strip())

    def set_mailport(self, mailport: int) -> None:
        if isinstance(mailport, bool) or not isinstance(mailport, int) or not 0 < mailport < 65536:
            raise InterfaceError("mailport must be a port number")
        self._set("MAILPORT", mailport)

    def set_sendfrom(self, sendfrom: str) -> None:
        self._set("SENDFROM", sendfrom)

    def get_mailhost(self) -> str | None:
        return self._get("MAILHOST")

    def get_mailport(self) -> int:
        return self._get("MAILPORT") or 25

    def get_sendfrom(self) -> str | None:
        return self._get("SENDFROM")
