"""Incremental operators, the keyed stages they lower to, the runners and their data structures."""
