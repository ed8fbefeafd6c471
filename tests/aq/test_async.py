"""python-oracledb's asyncio API (``connect_async``, ``AsyncQueue``, ``AsyncCursor``,
``create_pool_async``): code written for python-oracledb's async AQ runs by changing the
connect line.  A dequeue waiting for a message holds its connection's thread, never the
event loop; cancelling the task ends the wait having taken nothing; close() ends a waiting
dequeue (DPY-1001); the connection's thread stops with it.  Both backends."""

from __future__ import annotations

import asyncio
import threading

import pytest

import sluice as oracledb      # as a python-oracledb program would name it

SETUP = """
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'ASYNC_QT', queue_payload_type => 'RAW');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'ASYNC_Q', queue_table => 'ASYNC_QT');
  DBMS_AQADM.START_QUEUE(queue_name => 'ASYNC_Q');
END;"""


def _threads() -> int:
    return sum(t.name == "sluice-async" for t in threading.enumerate())


def test_an_async_aq_program_runs_with_only_the_connect_line_changed(dsn):
    before = _threads()

    async def main():
        async with oracledb.connect_async(dsn) as connection:
            with connection.cursor() as cursor:
                await cursor.execute(SETUP)
            queue = connection.queue("ASYNC_Q")
            await queue.enqone(connection.msgproperties(payload=b"The first message", correlation="c1"))
            await queue.enqmany([connection.msgproperties(payload=f"message {i}".encode()) for i in range(3)])
            assert connection.transaction_in_progress
            await connection.commit()
            queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
            first = await queue.deqone()
            rest = await queue.deqmany(5)
            await connection.commit()
            assert await queue.deqone() is None
            rows = await connection.fetchall("SELECT COUNT(*) FROM AQ$ASYNC_QT")
            cursor = connection.cursor()
            await cursor.execute("SELECT name FROM user_queues WHERE name = :n", ["ASYNC_Q"])
            names = [row async for row in cursor]
            return first, rest, rows, names
    first, rest, rows, names = asyncio.run(main())
    assert (first.payload, first.correlation) == (b"The first message", "c1") and len(first.msgid) == 16
    assert [m.payload for m in rest] == [b"message 0", b"message 1", b"message 2"]
    assert rows == [(0,)] and names == [("ASYNC_Q",)]
    assert _threads() == before          # the connection's thread stopped with it


def test_a_waiting_dequeue_does_not_hold_the_event_loop(dsn):
    """While one task waits in deqone, the loop runs another task that enqueues through a
    second connection; the waiter gets that message."""
    async def main():
        async with oracledb.connect_async(dsn) as consumer, oracledb.connect_async(dsn) as producer:
            await consumer.execute(SETUP)
            queue = consumer.queue("ASYNC_Q")
            queue.deqoptions.wait = 30
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.01)

            async def produce():
                await asyncio.sleep(0.3)
                q = producer.queue("ASYNC_Q")
                await q.enqone(producer.msgproperties(payload=b"late"))
                await producer.commit()
            tick = asyncio.create_task(ticker())
            message, _ = await asyncio.wait_for(asyncio.gather(queue.deqone(), produce()), 20)
            tick.cancel()
            await consumer.commit()
            return message, ticks
    message, ticks = asyncio.run(main())
    assert message.payload == b"late" and ticks >= 10


def test_cancelling_a_waiting_dequeue_takes_nothing_and_frees_the_connection(dsn):
    async def main():
        async with oracledb.connect_async(dsn) as connection:
            await connection.execute(SETUP)
            queue = connection.queue("ASYNC_Q")
            queue.deqoptions.wait = oracledb.DEQ_WAIT_FOREVER
            waiting = asyncio.create_task(queue.deqone())
            await asyncio.sleep(0.3)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            # the connection is free: its next calls run at once
            other = connection.queue("ASYNC_Q")
            await asyncio.wait_for(other.enqone(connection.msgproperties(payload=b"after")), 10)
            await connection.commit()
            other.deqoptions.wait = oracledb.DEQ_NO_WAIT
            got = await asyncio.wait_for(other.deqmany(10), 10)
            await connection.commit()
            return [m.payload for m in got]
    assert asyncio.run(main()) == [b"after"]


def test_close_ends_a_waiting_dequeue_and_errors_arrive_as_sluice_errors(dsn):
    async def main():
        connection = await oracledb.connect_async(dsn)
        await connection.execute(SETUP)
        with pytest.raises(oracledb.DatabaseError, match="ORA-24010"):
            await connection.queue("NO_SUCH_Q").enqone(connection.msgproperties(payload=b"x"))
        queue = connection.queue("ASYNC_Q")
        queue.deqoptions.wait = oracledb.DEQ_WAIT_FOREVER
        waiting = asyncio.create_task(queue.deqone())
        await asyncio.sleep(0.3)
        await asyncio.wait_for(connection.close(), 10)
        with pytest.raises(oracledb.InterfaceError, match="DPY-1001"):
            await asyncio.wait_for(waiting, 10)
        with pytest.raises(oracledb.InterfaceError, match="DPY-1001"):
            await connection.commit()
    before = _threads()
    asyncio.run(main())
    assert _threads() == before


def test_an_async_pool(dsn):
    async def main():
        pool = oracledb.create_pool_async(dsn, min=1, max=2)
        async with pool.acquire() as connection:
            await connection.aqadm.create_queue_table(queue_table="ASYNC_QT", queue_payload_type="RAW")
            await connection.aqadm.create_queue(queue_name="ASYNC_Q", queue_table="ASYNC_QT")
            await connection.aqadm.start_queue(queue_name="ASYNC_Q")
            await connection.queue("ASYNC_Q").enqone(connection.msgproperties(payload=b"pooled"))
            await connection.commit()
            busy = pool.busy
        connection = await oracledb.connect_async(pool=pool)
        queue = connection.queue("ASYNC_Q")
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        message = await queue.deqone()
        await connection.commit()
        await pool.release(connection)
        idle = pool.busy
        await pool.close()
        return busy, message.payload, idle
    assert asyncio.run(main()) == (1, b"pooled", 0)


def test_a_connection_dropped_without_close_stops_its_thread(dsn):
    """The thread keeps nothing of its last call (a cursor's closure held the connection,
    so it was never collected and its thread never ended)."""
    import gc
    import time
    before = _threads()

    async def main():
        connection = await oracledb.connect_async(dsn)
        await connection.execute(SETUP)
        assert _threads() == before + 1
    asyncio.run(main())
    gc.collect()
    end = time.monotonic() + 10
    while _threads() > before and time.monotonic() < end:
        time.sleep(0.05)
    assert _threads() == before


def test_tasks_sharing_an_async_connection_take_turns(dsn):
    """100 tasks enqueue at once through one connection, then one commit: all 100 there,
    in the order the calls were made."""
    async def main():
        async with oracledb.connect_async(dsn) as connection:
            await connection.execute(SETUP)
            queue = connection.queue("ASYNC_Q")
            await asyncio.gather(*(queue.enqone(connection.msgproperties(payload=b"%d" % i)) for i in range(100)))
            await connection.commit()
            queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
            got = await queue.deqmany(200)
            await connection.commit()
            return [int(m.payload) for m in got]
    assert asyncio.run(main()) == list(range(100))
