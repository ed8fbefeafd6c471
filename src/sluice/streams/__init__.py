"""Oracle Streams: logical change records and how Streams clients use rule sets.

``RowLCR`` / ``DDLLCR`` are ``SYS.LCR$_ROW_RECORD`` / ``SYS.LCR$_DDL_RECORD``
(:mod:`sluice.streams.lcr`); :func:`evaluate_rule_sets` is the one place every
Streams client (capture, propagation, apply, messaging client) decides whether
to perform its task for a message (:mod:`sluice.streams.rulesets`).
"""

from ..rules.engine.anydata import AnyData
from .lcr import (COMPATIBLE_9_2, COMPATIBLE_10_1, COMPATIBLE_10_2, COMPATIBLE_11_1,
                  COMPATIBLE_11_2, COMPATIBLE_12_1, COMPATIBLE_12_2, DDLLCR, RowLCR, RowUnit)
from .rulesets import Verdict, evaluate_rule_sets
from . import lcrcodec  # noqa: F401  (LCRs in ANYDATA queues)

__all__ = ["RowLCR", "DDLLCR", "RowUnit", "AnyData", "Verdict", "evaluate_rule_sets", "COMPATIBLE_9_2", "COMPATIBLE_10_1",
           "COMPATIBLE_10_2", "COMPATIBLE_11_1", "COMPATIBLE_11_2", "COMPATIBLE_12_1",
           "COMPATIBLE_12_2"]
