"""``DBMS_OUTPUT``: a block's PUT / PUT_LINE lines, for the statement and for the session.

Two readers, as Oracle has two:

- the statement's ``output`` list (``cursor.output``, what ``sluice sql`` prints, as
  SQL*Plus prints with SERVEROUTPUT ON) gets every line unless the session called
  DISABLE;
- the **session's buffer** (:class:`SessionOutput`, one per connection) is what a
  python-oracledb program reads back with ``DBMS_OUTPUT.GET_LINE`` / ``GET_LINES`` --
  python-oracledb's own ``dbms_output`` sample: ``callproc("dbms_output.enable")``, run
  the blocks, then ``callproc("dbms_output.get_line", (line_var, status_var))`` until the
  status is 1.  As in Oracle the buffer is off until ENABLE, DISABLE empties it, ENABLE's
  ``buffer_size`` bounds it (ORU-10027) and lines a GET has not fetched are dropped by the
  next PUT (Oracle: "to avoid confusing them with the next message").
"""

from __future__ import annotations

from ..errors import DatabaseError
from ..routines import out_params
from .values import to_number, to_text

DEFAULT_BUFFER = 20000          # ENABLE's default, in bytes
MIN_BUFFER, MAX_BUFFER = 2000, 1000000
MAX_LINE = 32767                # bytes in one line


def _oru(number: int, text: str) -> DatabaseError:
    # DBMS_OUTPUT raises its ORU- errors as the application error ORA-20000
    return DatabaseError(f"ORA-20000: ORU-{number}: {text}", 20000)


class SessionOutput:
    """One session's DBMS_OUTPUT buffer.  ``enabled`` is None until ENABLE or DISABLE is
    called: the statement's own output list keeps every line then."""

    def __init__(self) -> None:
        self.enabled: bool | None = None
        self.limit: int | None = DEFAULT_BUFFER
        self.lines: list[str] = []
        self.size = 0
        self.read_since_put = False

    def enable(self, buffer_size) -> None:
        size = to_number(buffer_size) if buffer_size is not None else None
        if size is not None:
            # Oracle clamps the size into its range (2,000 .. 1,000,000 bytes)
            size = min(max(int(size), MIN_BUFFER), MAX_BUFFER)
        # a second ENABLE keeps the buffer and takes the larger limit (Oracle's rule)
        if self.enabled and self.limit is not None and size is not None:
            size = max(size, self.limit)
        self.limit = size
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False
        self.lines, self.size = [], 0

    def put(self, line: str) -> None:
        if not self.enabled:
            return
        if self.read_since_put:                  # what a GET left unread is dropped
            self.lines, self.size, self.read_since_put = [], 0, False
        size = len(line.encode("utf-8"))
        if size > MAX_LINE:
            raise _oru(10028, f"line length overflow, limit of {MAX_LINE} bytes per line")
        if self.limit is not None and self.size + size > self.limit:
            raise _oru(10027, f"buffer overflow, limit of {self.limit} bytes")
        self.lines.append(line)
        self.size += size

    def take(self, count: int) -> list[str | None]:
        """Up to ``count`` lines, oldest first; an empty line is NULL, as Oracle's ``''``."""
        self.read_since_put = True
        taken, self.lines = self.lines[:count], self.lines[count:]
        self.size -= sum(len(line.encode("utf-8")) for line in taken)
        return [line or None for line in taken]


class DbmsOutput:
    """The package as one block run sees it: ``sink`` is the statement's output list,
    ``session`` the connection's :class:`SessionOutput`."""

    def __init__(self, sink: list[str], session: SessionOutput) -> None:
        self._sink = sink
        self._session = session
        self._partial = ""

    def _line(self, text: str) -> None:
        if self._session.enabled is not False:
            self._sink.append(text)
        self._session.put(text)

    def put_line(self, a=None) -> None:
        line, self._partial = self._partial + (to_text(a) or ""), ""
        self._line(line)

    def put(self, a=None) -> None:
        self._partial += to_text(a) or ""

    def new_line(self) -> None:
        self.put_line()

    def enable(self, buffer_size=DEFAULT_BUFFER) -> None:
        self._session.enable(buffer_size)

    def disable(self) -> None:
        self._session.disable()

    @out_params("line", "status")
    def get_line(self) -> tuple[str | None, int]:
        """One line and status 0, or NULL and status 1 when the buffer holds none."""
        taken = self._session.take(1)
        return (taken[0], 0) if taken else (None, 1)

    @out_params("lines", inout=("numlines",))
    def get_lines(self, lines=None, numlines=1) -> tuple[list[str | None], int]:
        """Up to ``numlines`` lines; ``numlines`` comes back as the count fetched.  (``lines``,
        an OUT parameter, is in the signature to keep Oracle's positions.)"""
        wanted = to_number(numlines)
        taken = self._session.take(max(int(wanted or 0), 0))
        return taken, len(taken)
