"""Data structures the stages keep their state in: the RPAI tree, PAI maps and aggregate indexes.

They know rows and values, not plans: they may import ``operators.zset`` only.
"""
