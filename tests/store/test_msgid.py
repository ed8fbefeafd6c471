"""Message and transaction ids stay unique across processes, forked ones included."""
import os

from sluice.store.base import new_msgid, new_txn_id


def _in_forked_child(make):
    """What ``make()`` returns in a forked child (bytes over a pipe)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child: write and leave at once
        try:
            os.write(write_end, make())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        data = os.read(read_end, 64)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    return data


def test_a_forked_child_draws_its_own_message_id_bits():
    # bytes 8..12 are the per-process random bits; the child must not reuse the parent's,
    # nor its counter (same nanosecond + same bits + same counter = the same message id)
    parent = new_msgid()
    child = _in_forked_child(new_msgid)
    assert len(child) == 16
    assert child[8:13] != parent[8:13]


def test_a_forked_child_has_its_own_transaction_ids():
    parent = new_txn_id()
    child = _in_forked_child(lambda: new_txn_id().encode()).decode()
    assert child.split(".")[:-1] != parent.split(".")[:-1]
