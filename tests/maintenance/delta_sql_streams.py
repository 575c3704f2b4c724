"""A keyed schema of one's own for the JVM delta strategy's tests: accounts and their payments, with
TIMESTAMPs, NULLs, dangling foreign keys, updates (a delete and an insert of one key in one batch),
accounts deleted under live payments and re-inserted in another region."""

from __future__ import annotations

import datetime
import random
from decimal import Decimal

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update

DDL = """
CREATE TABLE account (id INT PRIMARY KEY, region STRING, opened TIMESTAMP);
CREATE TABLE payment (pid INT PRIMARY KEY, account_id INT REFERENCES account(id), amount DECIMAL(10,2),
                      fee DOUBLE, qty INT, at TIMESTAMP)
"""
CATALOG = catalog_from_ddl(DDL)
_START = datetime.datetime(2026, 3, 1, 8, 0, tzinfo=datetime.UTC)


def payment_stream(seed: int, size: int = 900) -> list[Update]:
    """Random changes: mostly payment inserts, deletes of present rows, updates of present rows, and
    account churn; every change valid (the stream is set-semantics correct)."""
    rng = random.Random(seed)
    accounts: dict[int, tuple] = {}
    payments: dict[int, tuple] = {}
    stream: list[Update] = []
    next_pid = 1

    def emit(table: str, op: int, row: tuple) -> None:
        stream.append(Update(len(stream) + 1, table, op, row))

    while len(stream) < size:
        roll = rng.random()
        if roll < 0.15 or not accounts:
            key = rng.randint(1, 12)
            if key in accounts:
                emit("account", -1, accounts.pop(key))
            if rng.random() < 0.8:
                row = (key, rng.choice(["north", "south", None]), _START + datetime.timedelta(days=key))
                accounts[key] = row
                emit("account", 1, row)
        elif roll < 0.6 or not payments:
            row = (next_pid, rng.randint(1, 14), rng.choice([None, Decimal("9.99"), Decimal("120.00"), Decimal("-5.50")]),
                   rng.choice([None, 0.5, 2.25, 7.0]), rng.choice([None, 1, 2, 3]),
                   _START + datetime.timedelta(minutes=37 * next_pid))
            payments[next_pid] = row
            next_pid += 1
            emit("payment", 1, row)
        elif roll < 0.8:
            emit("payment", -1, payments.pop(rng.choice(list(payments))))
        else:
            pid = rng.choice(list(payments))
            old = payments[pid]
            new = (pid, old[1], old[2], old[3], (old[4] or 0) + 1, old[5])
            payments[pid] = new
            emit("payment", -1, old)
            emit("payment", 1, new)
    return stream
