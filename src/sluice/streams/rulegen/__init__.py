"""DBMS_STREAMS_ADM's system-created rules (seed 000_c58e7ef949d95dc2.txt "System-Created
Rules"): the conditions it generates (``conditions.py``, ``subset.py``), the data
dictionary it consults (``dictionary.py``), the Streams clients it attaches rule sets to
(``clients.py``), the all-or-nothing creation (``generate.py``), what it records for
DBA_STREAMS_RULES (``catalog.py``) and the procedures' bodies (``procedures.py``)."""

from .conditions import global_condition, schema_condition, table_condition, with_and_condition
from .subset import subset_conditions

__all__ = ["global_condition", "schema_condition", "table_condition", "with_and_condition",
           "subset_conditions"]
