"""One module per rewrite rule: each turns part of a logical plan into maintenance-plan nodes (or
normalizes it for those that do), states its law and its paper, and records why it declined.

Rules read plans (``planner.ir``), schema facts (``catalog``) and the optimizer's ``Rule`` and
context (``planner.optimizer``); they import nothing else, so a rule can be tested on plan text alone.
"""
