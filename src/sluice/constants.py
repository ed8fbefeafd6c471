"""python-oracledb's AQ constants, with python-oracledb's values.

Code written for ``oracledb`` keeps working when it says ``sluice.DEQ_BROWSE``
instead of ``oracledb.DEQ_BROWSE``; the numbers are the same.
"""

# dequeue modes
DEQ_BROWSE = 1
DEQ_LOCKED = 2
DEQ_REMOVE = 3
DEQ_REMOVE_NODATA = 4

# dequeue navigation
DEQ_FIRST_MSG = 1
DEQ_NEXT_TRANSACTION = 2
DEQ_NEXT_MSG = 3

# visibility
DEQ_IMMEDIATE = 1
DEQ_ON_COMMIT = 2
ENQ_IMMEDIATE = 1
ENQ_ON_COMMIT = 2

# dequeue wait
DEQ_NO_WAIT = 0
DEQ_WAIT_FOREVER = 2**32 - 1

# message states
MSG_READY = 0
MSG_WAITING = 1
MSG_PROCESSED = 2
MSG_EXPIRED = 3

# delay / expiration
MSG_NO_DELAY = 0
MSG_NO_EXPIRATION = -1

# delivery modes
MSG_PERSISTENT = 1
MSG_BUFFERED = 2
MSG_PERSISTENT_OR_BUFFERED = 3

# names used by the AQ$<queue_table> view for MSG_STATE
STATE_NAMES = {MSG_READY: "READY", MSG_WAITING: "WAITING", MSG_PROCESSED: "PROCESSED", MSG_EXPIRED: "EXPIRED"}

# DBMS_AQADM / DBMS_AQ package constants
INFINITE = -1          # DBMS_AQADM.INFINITE, DBMS_AQ.NEVER (retention FOREVER)
