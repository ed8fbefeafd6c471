"""Which task of the Spark apply sink applies which transaction (no Spark)."""

from sluice.pipeline.applyplan import key_hash, plan


def test_transactions_changing_the_same_rows_go_to_one_task_and_the_rest_spread():
    txns = [("a", (1, 1), 10, [1, 2]), ("b", (2, 1), 10, [3]), ("c", (3, 1), 10, [2, 4]),
            ("d", (4, 1), 10, [5]), ("e", (5, 1), 10, [4]), ("f", (6, 1), 10, [6])]
    where = plan(reversed(txns), 2)           # any order in: commit order decides
    assert where["a"] == where["c"] == where["e"]    # a-c share key 2, c-e key 4
    assert {where["b"], where["d"], where["f"]} != {where["a"]}
    # the load: the group of 30 rows on one task, the three of 10 on the other
    assert sum(10 for t in "bdf" if where[t] != where["a"]) == 30


def test_a_transaction_that_is_not_only_row_lcrs_puts_the_batch_on_one_task():
    txns = [("a", (1, 1), 5, [1]), ("ddl", (2, 1), 1, None), ("b", (3, 1), 5, [2]), ("c", (0, 1), 5, [3])]
    assert len(set(plan(txns, 4).values())) == 1


def test_key_hashes_are_stable_and_fit_a_bigint():
    k = ("U1", "T1", (42,))
    assert key_hash(k) == key_hash(("U1", "T1", (42,))) != key_hash(("U1", "T1", (43,)))
    assert 0 <= key_hash(k) < 2 ** 63
