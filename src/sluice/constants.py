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

# A remote recipient's record that a queue-to-dblink propagation could not deliver for an
# application error (seed 003 "Propagation failures": the destination queue does not
# exist, its payload type differs): it stays, never dequeued or propagated again.  Not a
# python-oracledb constant (those are the four above) and not an Oracle STATE code:
# Oracle shows UNDELIVERABLE from the recipient's dequeue history (a dequeue time without
# a dequeue transaction); Sluice keeps a record per recipient in the queue table itself,
# so the state is stored there, with a code no Oracle queue table uses (0-10 are taken).
STATE_UNDELIVERABLE = 11

# names used by the AQ$<queue_table> view for MSG_STATE
STATE_NAMES = {MSG_READY: "READY", MSG_WAITING: "WAITING", MSG_PROCESSED: "PROCESSED", MSG_EXPIRED: "EXPIRED",
               STATE_UNDELIVERABLE: "UNDELIVERABLE"}

# DBMS_AQADM / DBMS_AQ package constants
INFINITE = -1          # DBMS_AQADM.INFINITE, DBMS_AQ.NEVER (retention FOREVER)

# notifications (python-oracledb's values)
SUBSCR_NAMESPACE_AQ = 1
SUBSCR_NAMESPACE_DBCHANGE = 2
SUBSCR_PROTO_CALLBACK = 0
SUBSCR_PROTO_OCI = 0
SUBSCR_PROTO_MAIL = 1
SUBSCR_PROTO_PLSQL = 2
SUBSCR_PROTO_SERVER = 2
SUBSCR_PROTO_HTTP = 3
# the operations a subscription's ``operations`` names (python-oracledb's OPCODE_ values)
OPCODE_ALLOPS, OPCODE_ALLROWS, OPCODE_INSERT, OPCODE_UPDATE = 0, 1, 2, 4
OPCODE_DELETE, OPCODE_ALTER, OPCODE_DROP = 8, 16, 32
SUBSCR_QOS_RELIABLE = 1
SUBSCR_QOS_DEREG_NFY = 2
SUBSCR_QOS_ROWIDS = 4
SUBSCR_QOS_QUERY = 8
SUBSCR_QOS_BEST_EFFORT = 16
SUBSCR_GROUPING_CLASS_NONE = 0
SUBSCR_GROUPING_CLASS_TIME = 1
SUBSCR_GROUPING_TYPE_SUMMARY = 1
SUBSCR_GROUPING_TYPE_LAST = 2
EVENT_NONE = 0
EVENT_DEREG = 5
EVENT_AQ = 100
