"""Which task of the Spark apply sink applies which transaction (no Spark)."""

from sluice.pipeline.applyplan import key_hash, plan


def test_transactions_go_where_their_dependencies_are_or_wait_for_them_in_the_target():
    txns = [("a", "A", (1, 1), 10, [1]), ("b", "B", (2, 1), 10, [2]), ("c", "C", (3, 1), 10, [1, 9]),
            ("d", "D", (4, 1), 10, [1, 2]), ("e", "E", (5, 1), 10, [7])]
    where, waits = plan(reversed(txns), 2)          # any order in: commit order decides
    assert where["a"] != where["b"]                 # independent: spread
    assert where["c"] == where["a"] and "C" not in waits    # after a on a's task: no wait
    # d changes a row of c (a's task) and one of b (the other): it waits for the other task's one
    assert waits["D"] == (["B"] if where["d"] == where["a"] else ["C"])
    assert set(waits) == {"D"}


def test_a_transaction_that_is_not_only_row_lcrs_puts_the_batch_on_one_task():
    txns = [("a", "A", (1, 1), 5, [1]), ("ddl", None, (2, 1), 1, None), ("b", "B", (3, 1), 5, [2]),
            ("c", "C", (0, 1), 5, [3])]
    where, waits = plan(txns, 4)
    assert len(set(where.values())) == 1 and waits == {}


def test_key_hashes_are_stable_and_fit_a_bigint():
    k = ("U1", "T1", (42,))
    assert key_hash(k) == key_hash(("U1", "T1", (42,))) != key_hash(("U1", "T1", (43,)))
    assert 0 <= key_hash(k) < 2 ** 63
