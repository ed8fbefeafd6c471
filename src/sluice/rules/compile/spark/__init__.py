"""Rule -> Spark (PySpark 4, ANSI mode).

``compiler`` renders one condition as a ``pyspark.sql.Column``; ``plan`` takes a rule
set apart (join keys, classes, guards, complex rules) in pure Python and ``ruleset``
(:class:`~.ruleset.SparkRuleSet`) turns the plan into one query over an LCR DataFrame.
"""
