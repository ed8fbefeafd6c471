"""The session's time zone: Oracle's SESSIONTIMEZONE, in which the views show their dates.

Oracle keeps AQ's times in UTC and its views show them in the session's time zone
(``CAST(FROM_TZ(enq_time, '00:00') AT TIME ZONE sessiontimezone AS DATE)``); CURRENT_DATE,
CURRENT_TIMESTAMP and LOCALTIMESTAMP are that zone's wall clock, SYSDATE and SYSTIMESTAMP
the server's.  Sluice's stores keep POSIX seconds; the views turn them into the session
zone's wall clock (:data:`sluice.store.dialect.Dialect.epoch_to_timestamp`):

* SQLite by its ``strftime`` shifted by ``sluice_zone_shift()`` for an offset zone, by
  ``sluice_view_date(seconds)`` for a region: functions of each connection reading that
  connection's :class:`ViewClock` (:data:`SQLITE_VIEW_DATE`);
* PostgreSQL by ``AT TIME ZONE`` the connection's ``sluice.time_zone`` setting, the zone
  as PostgreSQL reads it (:attr:`SessionZone.postgres`: an offset written the POSIX way);
  the AQ$ views read it once a statement (``SLUICE_SESSION_ZONE()``,
  :attr:`sluice.store.dialect.Dialect.zone_join`: an offset as an interval).

A session starts in python-oracledb's zone: ``ORA_SDTZ`` when set, else the offset of the
process's local time at logon (see docs/DESIGN-NOTES.md); ``ALTER SESSION SET TIME_ZONE``
changes it (:func:`zone_setting`: ``'+05:00'``, ``'Europe/Paris'``, ``LOCAL``, ``DBTIMEZONE``;
the statement read by :mod:`.sessionnls`).
"""

from __future__ import annotations

import functools
import os
import re
import zoneinfo
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone, tzinfo

from ..errors import ora

__all__ = ["DBTIMEZONE", "SQLITE_VIEW_DATE", "SessionZone", "ViewClock", "default_zone", "local_zone",
           "parse", "register", "zone_option", "zone_setting"]

DBTIMEZONE = "+00:00"       # the stores keep UTC (POSIX seconds): the database's own zone
_OFFSET = re.compile(r"\s*([+-]?)(\d{1,2}):(\d{1,2})\s*")
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*")
# SQLite's date.c: 1970-01-01 as a Julian day in milliseconds, and the end of year 9999
_EPOCH_JULIAN_MS, _MAX_JULIAN_MS = 210866760000000.0, 464269060800000.0
_EPOCH_DAY = date(1970, 1, 1)


@dataclass(frozen=True)
class SessionZone:
    """One time zone a session can be in."""

    name: str                                   # as SESSIONTIMEZONE shows it: '+05:30', 'Europe/Paris'
    tz: tzinfo = field(compare=False)

    @property
    def postgres(self) -> str:
        """The zone as PostgreSQL's ``AT TIME ZONE`` reads it: a region by its name, an
        offset in POSIX form (PostgreSQL reads a bare ``'+05:00'`` as five hours west)."""
        if self.name[0] in "+-":
            west = "-" if self.name[0] == "+" else "+"
            return f"<{self.name}>{west}{self.name[1:]}"
        return self.name

    def wall_clock(self, instant: datetime) -> datetime:
        """The zone's wall-clock time (naive) at ``instant`` (aware, or naive local)."""
        return instant.astimezone(self.tz).replace(tzinfo=None)


def parse(text: str) -> SessionZone:
    """The zone a ``TIME_ZONE`` value names: ``[+|-]hh:mm`` (-12:00 to +14:00) or a region.

    :raises DatabaseError: ORA-01874 / ORA-01875 for an hour / minute out of range,
        ORA-01882 for a region Oracle (and the tz database) does not know."""
    m = _OFFSET.fullmatch(text)
    if m:
        sign, hours, minutes = m.group(1) or "+", int(m.group(2)), int(m.group(3))
        if minutes > 59:
            raise ora(1875)
        total = (hours * 60 + minutes) * (-1 if sign == "-" else 1)
        if not -12 * 60 <= total <= 14 * 60:
            raise ora(1874)
        return _offset_zone(total)
    name = text.strip()
    if not _REGION.fullmatch(name):
        raise ora(1882)
    try:
        return SessionZone(name, zoneinfo.ZoneInfo(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        pass
    # Oracle's region names are not case-sensitive; the tz database's files are
    canonical = {z.upper(): z for z in zoneinfo.available_timezones()}.get(name.upper())
    if canonical is None:
        raise ora(1882)
    return SessionZone(canonical, zoneinfo.ZoneInfo(canonical))


def zone_setting(value: str, quoted: bool, local: SessionZone) -> SessionZone:
    """The zone ``ALTER SESSION SET TIME_ZONE = '<zone>' | LOCAL | DBTIMEZONE`` sets (``value``
    the setting's, unquoted; ``local`` the zone the session started in, LOCAL's); the
    statement is read by :func:`.sessionnls.alter_session`.

    :raises DatabaseError: ORA-00922 for a bare word other than those, the zone's errors
        (:func:`parse`)."""
    if quoted:
        return parse(value)
    if value.upper() in ("LOCAL", "DBTIMEZONE"):
        return local if value.upper() == "LOCAL" else parse(DBTIMEZONE)
    raise ora(922, value)


def _offset_zone(minutes: int) -> SessionZone:
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return SessionZone(f"{sign}{hours:02d}:{mins:02d}", timezone(timedelta(minutes=minutes)))


def local_zone() -> SessionZone:
    """The offset of the process's local time now (python-oracledb's zone of a session
    when ``ORA_SDTZ`` is not set: an offset, fixed at logon)."""
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    return _offset_zone(round(offset.total_seconds() / 60))


def default_zone() -> SessionZone:
    """A new session's zone: ``ORA_SDTZ`` (a zone, ``OS_TZ`` or ``DB_TZ``) when set, else
    :func:`local_zone`.  :raises DatabaseError: as :func:`parse`, for a bad ``ORA_SDTZ``."""
    setting = os.environ.get("ORA_SDTZ", "").strip()
    if not setting or setting.upper() == "OS_TZ":
        return local_zone()
    if setting.upper() == "DB_TZ":
        return parse(DBTIMEZONE)
    return parse(setting)


def zone_option() -> str:
    """The libpq ``options`` part giving a new PostgreSQL connection the default zone."""
    return f" -c sluice.time_zone={default_zone().postgres}"


# SQLite's view of POSIX seconds {x}: an offset zone shifts SQLite's own strftime by a
# modifier (a constant of the statement, computed once), a region (its offset changes with
# the date) takes Python's tz database per row
SQLITE_VIEW_DATE = ("CASE WHEN sluice_zone_shift() IS NULL THEN sluice_view_date({x}) "
                    "ELSE strftime('%Y-%m-%d %H:%M:%f', {x}, 'unixepoch', sluice_zone_shift()) END")


class ViewClock:
    """An SQLite connection's session zone, which its views' dates are shown in
    (``sluice_zone_shift`` / ``sluice_view_date``, :func:`register`)."""

    __slots__ = ("_zone", "_offsets")

    def __init__(self, zone: SessionZone) -> None:
        self.zone = zone

    @property
    def zone(self) -> SessionZone:
        return self._zone

    @zone.setter
    def zone(self, zone: SessionZone) -> None:
        self._zone = zone
        self._offsets: dict[int, int | None] = {}   # a quarter of an hour -> the region's offset in it

    def zone_shift(self) -> str | None:
        """strftime's modifier for an offset zone (``'+18000 seconds'``), NULL for a region."""
        tz = self._zone.tz
        if not isinstance(tz, timezone):
            return None
        return f"{round(tz.utcoffset(None).total_seconds()):+d} seconds"

    def view_date(self, seconds: object) -> str | None:
        """POSIX ``seconds`` as the zone's wall clock, in the text SQLite's
        ``strftime('%Y-%m-%d %H:%M:%f', seconds, 'unixepoch')`` gives: milliseconds,
        rounded as SQLite rounds them (on its Julian-day count, in doubles, so a stored time
        fetched, bound and compared again finds itself); NULL for NULL or what is no time."""
        if seconds is None or isinstance(seconds, bytes):
            return None
        try:
            julian_ms = float(seconds) * 1000.0 + _EPOCH_JULIAN_MS
        except ValueError:
            return None
        if not 0.0 <= julian_ms < _MAX_JULIAN_MS:
            return None
        whole, frac = divmod(int(julian_ms + 0.5) - int(_EPOCH_JULIAN_MS), 1000)
        try:
            days, second = divmod(whole + self._offset(whole), 86400)
            day = _day_text(days)
        except (ValueError, OverflowError, OSError):
            return None
        hour, second = divmod(second, 3600)
        return f"{day}{hour:02d}:{second // 60:02d}:{second % 60:02d}.{frac:03d}"

    def _offset(self, whole: int) -> int:
        """The zone's offset (seconds east) at POSIX second ``whole``: one tz database look-up
        per quarter of an hour (transitions fall on quarters; one that does not is looked up
        per second), not per row."""
        quarter = whole // 900
        offsets = self._offsets
        if quarter not in offsets:
            if len(offsets) > 100_000:
                offsets.clear()
            first, last = _utc_offset(self._zone.tz, quarter * 900), _utc_offset(self._zone.tz, quarter * 900 + 899)
            offsets[quarter] = first if first == last else None
        offset = offsets[quarter]
        return _utc_offset(self._zone.tz, whole) if offset is None else offset


def _utc_offset(tz: tzinfo, whole: int) -> int:
    return int(datetime.fromtimestamp(whole, tz).utcoffset().total_seconds())


@functools.lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    """``'YYYY-MM-DD '`` of the day ``days`` after 1970-01-01."""
    day = _EPOCH_DAY + timedelta(days=days)
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d} "


def register(conn, zone: SessionZone | None = None) -> ViewClock:
    """Give the SQLite connection ``conn`` its views' clock (``conn.view_clock``), in
    ``zone`` (the default: :func:`default_zone`)."""
    clock = ViewClock(zone or default_zone())
    # deterministic: SQLite may then call them once per statement for the same argument
    conn.create_function("sluice_zone_shift", 0, clock.zone_shift, deterministic=True)
    conn.create_function("sluice_view_date", 1, clock.view_date, deterministic=True)
    conn.view_clock = clock
    return clock

