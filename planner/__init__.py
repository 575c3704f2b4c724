"""The front door: plan nodes, the SQL front end, the optimizer, EXPLAIN, the CLI and the API."""
