"""Oracle Streams capture processes over a PostgreSQL source (seed 001, chapter 3).

``DBMS_CAPTURE_ADM`` (:class:`CaptureAdm`, ``conn.capture_adm``) defines them,
:class:`CaptureProcess` runs one (logical decoding through a replication slot, rules,
LCRs into its ANYDATA queue, exactly once), ``DBMS_STREAMS`` (:class:`DbmsStreams`,
``conn.streams``) holds the session's tag.  :func:`capture_for_rules` is what
``DBMS_STREAMS_ADM.ADD_*_RULES`` calls to create a capture implicitly.
"""

from .adm import CaptureAdm, capture_for_rules
from .pgsource import emit_tag
from .process import CaptureProcess
from .tags import DbmsStreams, tag_transaction

__all__ = ["CaptureAdm", "CaptureProcess", "DbmsStreams", "capture_for_rules", "emit_tag",
           "tag_transaction"]
