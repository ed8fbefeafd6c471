"""The Spark engine: a site's Streams definitions run on Spark (``sluice pipeline run …``),
with the semantics of the Python host.

Modules: :mod:`.queueio` (a queue as a pipeline reads it: positions in commit order,
ranges, acknowledgement with the low-watermark, below Spark), :mod:`.rows` (records as rows
of the LCR columns the rule compiler reads, Arrow batches, and back to LCRs), :mod:`.source`
(the ``sluice`` Python data source: ``spark.readStream.format("sluice")`` /
``spark.read.format("sluice")``), :mod:`.stages` (rule sets, row migration,
transformations), :mod:`.transform` (transformations as Columns / UDFs), :mod:`.sinks`
(apply, enqueue, warehouse), :mod:`.report`, :mod:`.runner` (``PipelineRun``), :mod:`.lease`
(the process host's lease of the Streams process a run executes: one engine at a time).

DESIGN.md section 5: a Python streaming data source (``pyspark.sql.datasource``) reads
staged LCRs from Sluice queues; rule sets are evaluated as compiled Columns
(:mod:`sluice.rules.compile.spark`); subset-rule row migration,
transformations, tag checks and routing run on the DataFrame; apply happens in
``foreachBatch``, ordered by (commit SCN, transaction, sequence), replaying each source
transaction through the target's driver and recording the applied low-watermark in the
same target transaction (exactly once).  The seeds' semantics it must keep: seed
000_c58e7ef949d95dc2.txt Table 6-1 "Rule Sets and Streams Client Behavior", "Row
Migration and Subset Rules"; seed 001_0cd730aa595c4170.txt "Queues and Apply Processes".
A differential test holds it equal to :mod:`sluice.streams.apply` (DESIGN.md
section 7, "Engines").

A front door: it may use every layer below it (docs/ARCHITECTURE.md).
"""
