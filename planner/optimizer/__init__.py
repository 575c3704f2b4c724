"""The rule engine: the executor that runs batches of rules and records every run, the context
rules read and record into, the batch list in order, and why a plan ended unmaintained.

It may import ``planner.ir`` and ``catalog``. Rules import the executor and the context, so only
``batches`` (the one visible list of rules) imports ``rules``, and nothing here below it does.
"""
