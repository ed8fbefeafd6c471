"""The rules engine (Python): rule sets compiled once, evaluated per event.

``ruleset`` keeps rules, rule sets and evaluation contexts as catalog objects;
``evaluator`` (:class:`~.evaluator.RuleSetEvaluator`) compiles a rule set's rules with
the Python compiler and evaluates an event (seed 000 "Rule Sets and Rule Evaluation of
Messages", undefined variables); ``index`` files simple rules by their equality terms
(Oracle's fast evaluation); ``internal`` resolves the functions an evaluation context
names; ``types`` and ``anydata`` are the ``SYS.RE$…`` and ``SYS.ANYDATA`` values.
The packages built on it are :mod:`sluice.rules.adm` (DBMS_RULE_ADM) and
:mod:`sluice.rules.evaluate` (DBMS_RULE).
"""
