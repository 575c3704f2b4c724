"""Execution: Z-sets at the ground floor, then ``structures`` (indexes), ``stages`` (keyed stages),
``runtime`` (runners, validation, the stream format), each importing only the layers below it.

``lowering`` is the one bridge from maintenance plans to stages; apart from it nothing here
imports the planner or the rules.
"""
