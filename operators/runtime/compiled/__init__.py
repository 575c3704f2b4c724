"""The local runner's compiled path: each view's plan written out as specialized Python (issue 13)."""
