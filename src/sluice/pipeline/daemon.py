"""The PySpark daemon of Sluice's pipelines (``spark.python.daemon.module``).

Spark's Python workers are forked from one daemon per executor; each then imports what
its task needs -- for a pipeline the whole of Sluice's store, rules, Streams and apply
code, about a second per worker on the 2-core machine, paid again by every worker a
micro-batch forks.  This daemon imports that code once, before it forks, so the workers
inherit it.  Only modules that start no thread are imported here (a fork copies no
thread: PySpark's own daemon leaves pandas and pyarrow, which do, to the workers).
"""

from __future__ import annotations

import pyspark.daemon as _daemon

# the modules the sinks' and stages' tasks import (none imports pandas or pyarrow)
import sluice.pipeline.applyplan  # noqa: F401
import sluice.pipeline.queueio  # noqa: F401
import sluice.pipeline.rows  # noqa: F401
import sluice.pipeline.sinks  # noqa: F401
import sluice.rules.engine.ruleset  # noqa: F401
import sluice.store.postgres  # noqa: F401
import sluice.store.sqlite  # noqa: F401
import sluice.streams.apply.parallel  # noqa: F401
import sluice.streams.apply.process  # noqa: F401

if __name__ == "__main__":
    _daemon.manager()
