"""The typed intermediate form between a rule tree and the statically typed targets.

``lower`` turns a condition into ``ir`` with every datatype known and Oracle's implicit
conversions, NULL handling and error cases spelled out (``lowerfns`` does the built-in
functions, ``dates`` the date format models); SQL (:mod:`..sql`) and Spark
(:mod:`..spark`) only render the result.  ``resolvers`` map names to IR for plain
tables, ``lcrschema`` for LCR member calls over the columnar LCR shape.
"""
