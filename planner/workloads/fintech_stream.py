"""The change stream of the user-view suite's card-issuing fintech (``examples/user_views/fintech.sql``)
over half a year: customers onboarding through KYC, their accounts in several currencies and cards,
card purchases, ATM withdrawals, salaries, fees and interest, daily FX rates and disputes.

What a core-banking change log carries and what breaks maintenance: card purchases authorised as
``pending`` and posted a day or two later (a delete and an insert of the same ``txn_id``), declines
retried within minutes, reversals, the processor's double postings (the same purchase under a second
``txn_id``, mostly removed again), card-testing bursts (two merchants within two minutes),
transactions at merchants the reference data does not know yet (a dangling ``merchant_id``, one
onboarded later), erased customers whose accounts outlive them, accounts opened before their
customer row arrives, NULLs (segment, KYC status, city, credit limit, card of a transfer), the
``crypto`` merchants delisted and relisted (a category's group emptied and refilled) and a month of
CHF rates withdrawn by the data vendor and republished.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from planner.workloads.entity_stream import (
    FIRST,
    HORIZON,
    LAST,
    START,
    Entity,
    Stream,
    at,
    day,
    maybe,
    money,
    pick,
    zipf,
)
from planner.workloads.user_views import schema_ddl, table_shapes

DAY = 86_400.0
#: category: (MCC, high risk, ticket range, merchant countries)
CATEGORIES = {
    "grocery": ("5411", False, (4, 120), ["DE", "DE", "FR", "NL"]),
    "restaurants": ("5812", False, (8, 90), ["DE", "FR", "ES", "GB"]),
    "fuel": ("5541", False, (20, 110), ["DE", "FR", "NL"]),
    "electronics": ("5732", False, (30, 1600), ["DE", "US", "NL"]),
    "travel": ("4511", False, (60, 2400), ["US", "GB", "ES", "FR"]),
    "utilities": ("4900", False, (30, 220), ["DE", "FR"]),
    "gambling": ("7995", True, (10, 450), ["MT", "GB"]),
    "crypto": ("6051", True, (50, 2000), ["EE", "MT", "US"]),
}
CITIES = {"DE": ["Berlin", "München", "hamburg "], "FR": ["Paris", "Lyon"], "NL": ["Amsterdam"], "ES": ["Madrid"],
          "GB": ["London", "Manchester"], "US": ["New York", "San Francisco"], "MT": ["Valletta"], "EE": ["Tallinn"]}
CURRENCY = {"GB": "GBP", "US": "USD", "CH": "CHF"}  # every other country pays in EUR
BRANDS = ["Nova", "Blue", "Prime", "Metro", "Alpha", "Sun", "Royal", "Urban"]
CRYPTO_DELISTED, CRYPTO_RELISTED = 100 * DAY, 130 * DAY


def fintech_stream(seed: int = 26) -> Stream:
    rng = random.Random(seed)
    stream = Stream(table_shapes(schema_ddl("fintech")))
    ledger = _Ledger(rng, stream, _merchants(rng, stream))
    _fx_rates(rng, stream)
    account_id = 0
    for customer_id in range(1, 131):
        customer, born = _customer(rng, stream, customer_id)
        if rng.random() < 0.12 or customer.row["kyc_status"] == "rejected":
            continue  # signed up, never opened an account
        for kind in _account_kinds(rng, customer.row["segment"]):
            account_id += 1
            account = _account(rng, stream, account_id, customer, born, kind)
            ledger.activity(account, ledger.cards(account, migrated=customer_id <= 40))
    return stream


def _merchants(rng: random.Random, stream: Stream) -> list[Entity]:
    """Six merchants per category (names as acquirers send them: padded, any case), the crypto ones
    delisted and relisted; a merchant renamed, one reclassified as high risk."""
    merchants = []
    for category, (mcc, risky, _, countries) in CATEGORIES.items():
        for _ in range(6):
            merchant_id = len(merchants) + 1
            country = rng.choice(countries)
            name = f"{rng.choice(BRANDS)} {category.title()} {merchant_id}"
            name = rng.choice([name, name.upper(), f"  {name.lower()} "]) if rng.random() < 0.3 else name
            merchant = stream.add("merchants", rng.uniform(0, 3600), merchant_id=merchant_id, name=name, mcc=mcc,
                                  category=category, country=country,
                                  city=maybe(rng, 0.1, rng.choice(CITIES[country])), is_high_risk=risky)
            if category == "crypto":
                merchant.delete(CRYPTO_DELISTED + rng.uniform(0, 600)).restore(CRYPTO_RELISTED + rng.uniform(0, 600))
            merchants.append(merchant)
    merchants[3].set(60 * DAY, name="Prime Grocery Group")
    merchants[20].set(90 * DAY, is_high_risk=True)
    return merchants


def _fx_rates(rng: random.Random, stream: Stream) -> None:
    """A rate per currency and business day, published at 16:00; a few days missing, a few corrected
    within the hour; March's CHF rates withdrawn on day 95 and republished on day 120."""
    rates = {"USD": 0.92, "GBP": 1.16, "CHF": 1.04}
    for offset in range(182):
        date = (START + dt.timedelta(days=offset)).date()
        if date.weekday() >= 5:
            continue
        for currency in rates:
            rates[currency] *= 1 + rng.gauss(0, 0.004)
            if rng.random() < 0.03:
                continue  # not published that day
            published = offset * DAY + 16 * 3600
            rate = stream.add("fx_rates", published, currency=currency, rate_date=date,
                              rate_to_eur=Decimal(f"{rates[currency]:.6f}"))
            if rng.random() < 0.02:
                rate.set(published + 3600, rate_to_eur=Decimal(f"{rates[currency] * 1.001:.6f}"))
            if currency == "CHF" and date.month == 3:
                rate.delete(95 * DAY).restore(120 * DAY)


def _customer(rng: random.Random, stream: Stream, customer_id: int) -> tuple[Entity, float]:
    """A customer: the first 40 migrated from the old core in the first days (signed up in 2023); KYC
    pending, then verified, rejected or left pending; a few erased on request later."""
    migrated = customer_id <= 40
    born = rng.uniform(0, 5 * DAY) if migrated else rng.uniform(5 * DAY, 0.85 * HORIZON)
    signed_up = born - rng.uniform(30, 300) * DAY if migrated else born
    first, last = rng.choice(FIRST), rng.choice(LAST)
    country = pick(rng, {"DE": 5, "FR": 2, "NL": 1, "GB": 1, "CH": 0.5, "US": 0.5})
    domain = rng.choice(["gmail.com", "GMX.de", "outlook.com", "proton.me"])
    customer = stream.add(
        "customers", born, customer_id=customer_id, full_name=f"{first} {last}",
        email=maybe(rng, 0.03, f"{first.lower()}.{last.lower()}{customer_id}@{domain}"), country=country,
        segment=maybe(rng, 0.03, pick(rng, {"retail": 7, "premium": 2, "business": 1})),
        kyc_status="verified" if migrated else maybe(rng, 0.03, "pending"),
        birth_date=dt.date(rng.randint(1950, 2005), rng.randint(1, 12), rng.randint(1, 28)),
        created_at=at(signed_up), is_pep=maybe(rng, 0.03, rng.random() < 0.05))
    if not migrated and customer.row["kyc_status"] == "pending":
        outcome = pick(rng, {"verified": 85, "rejected": 5, "pending": 10})
        if outcome != "pending":
            customer.set(born + rng.uniform(0.2, 10) * DAY, kyc_status=outcome)
    if rng.random() < 0.05 and customer.row["segment"] == "retail":
        customer.set(born + rng.uniform(20, 120) * DAY, segment="premium")
    if rng.random() < 0.03:
        customer.delete(born + rng.uniform(40, 150) * DAY)
    return customer, born


def _account_kinds(rng: random.Random, segment: str | None) -> list[str]:
    kinds = ["checking"]
    if rng.random() < (0.6 if segment == "premium" else 0.3):
        kinds.append("savings")
    if rng.random() < 0.35:
        kinds.append("credit")
    if segment == "premium" and rng.random() < 0.4:
        kinds.append("usd")  # a second checking account in dollars
    return kinds


def _account(rng: random.Random, stream: Stream, account_id: int, customer: Entity, born: float, kind: str) -> Entity:
    """An account (a few arrive before their customer); some closed, a few frozen for review."""
    currency = "USD" if kind == "usd" else CURRENCY.get(customer.row["country"], "EUR")
    opened = born + rng.uniform(0.01, 5) * DAY
    account = stream.add(
        "accounts", opened if rng.random() > 0.03 else born - 120, account_id=account_id,
        customer_id=customer.row["customer_id"], account_type="checking" if kind == "usd" else kind,
        currency=currency, status="active", opened_on=day(opened), closed_on=None,
        credit_limit=rng.choice([Decimal("1000.00"), Decimal("2500.00"), Decimal("5000.00"), Decimal("0.00"), None])
        if kind == "credit" else None)
    if rng.random() < 0.05:
        closed = opened + rng.uniform(30, 160) * DAY
        account.set(closed, status="closed", closed_on=day(closed))
    elif rng.random() < 0.02:
        account.set(opened + rng.uniform(20, 120) * DAY, status="frozen")
    return account


class _Ledger:
    """Issues cards and books an account's transactions and disputes, numbering them."""

    def __init__(self, rng: random.Random, stream: Stream, merchants: list[Entity]):
        self.rng, self.stream, self.merchants = rng, stream, merchants
        self.card_id = self.txn_id = self.dispute_id = 0
        self.late_merchant: Entity | None = None  # merchant 901, onboarded after its first transaction

    def cards(self, account: Entity, migrated: bool) -> list[Entity]:
        """A checking or credit account's physical card (the migrated ones issued in mid-2021, expiring
        this summer) and maybe a virtual one; a few blocked as lost, a few deleted."""
        rng = self.rng
        if account.row["account_type"] == "savings":
            return []
        opened = _seconds(account.row["opened_on"], 9)
        issues = [opened - rng.uniform(900, 1000) * DAY if migrated else opened + 3600]
        if rng.random() < 0.3:
            issues.append(opened + rng.uniform(1, 60) * DAY)
        cards = []
        for number, issued in enumerate(issues):
            self.card_id += 1
            card_type = "virtual" if number else ("credit" if account.row["account_type"] == "credit" else "debit")
            card = self.stream.add(
                "cards", max(issued, opened), card_id=self.card_id, account_id=account.row["account_id"],
                card_type=card_type, network=pick(rng, {"VISA": 5, "Mastercard": 4, "Amex": 1}),
                last4=f"{rng.randint(0, 9999):04d}", issued_at=at(issued),
                expires_on=(at(issued) + dt.timedelta(days=3 * 365)).date(), is_blocked=False)
            if rng.random() < 0.04:
                card.set(max(issued, opened) + rng.uniform(10, 150) * DAY, is_blocked=True)
            elif rng.random() < 0.02:
                card.delete(max(issued, opened) + rng.uniform(30, 150) * DAY)
            cards.append(card)
        return cards

    def txn(self, when: float, account: Entity, **row) -> Entity:
        self.txn_id += 1
        row = {"card_id": None, "merchant_id": None, "currency": account.row["currency"], "description": None, **row}
        return self.stream.add("transactions", when, txn_id=self.txn_id, account_id=account.row["account_id"],
                               created_at=at(when), **row)

    def posted(self, when: float, account: Entity, **row) -> Entity:
        return self.txn(when, account, status="posted", posted_date=day(when + self.rng.uniform(0, 1) * DAY), **row)

    def activity(self, account: Entity, cards: list[Entity]) -> None:
        """The account's money movements from its opening to the horizon (or its closing): monthly a
        salary or repayment in and a fee or interest, and card purchases and ATM withdrawals."""
        rng = self.rng
        start = _seconds(account.row["opened_on"], 8)
        end = HORIZON - 60
        if account.row["closed_on"] is not None:
            end = min(end, _seconds(account.row["closed_on"], 0))
        kind = account.row["account_type"]
        if rng.random() < 0.06:
            return  # opened and never used
        for month in range(7):
            when = start + month * 30 * DAY + rng.uniform(0, 3) * DAY + rng.uniform(6, 10) * 3600
            if when >= end:
                break
            amount = rng.uniform(1500, 6000) if kind == "checking" else rng.uniform(100, 1500)
            self.posted(when, account, txn_type="transfer_in", channel="transfer", amount=money(amount),
                        description=maybe(rng, 0.2, "SEPA credit transfer"))
            if when + 3600 < end and (kind == "savings" or rng.random() < 0.4):
                fee = kind != "savings"
                self.posted(when + 3600, account, txn_type="fee" if fee else "interest", channel="internal",
                            amount=Decimal("4.90") if fee else money(rng.uniform(0.5, 25)),
                            description="Account fee" if fee else "Interest")
        if not cards:
            return
        when = start + rng.uniform(0, 3) * DAY
        rate = rng.choice([0.1, 0.2, 0.35]) / DAY  # purchases per second
        gambler = rng.random() < 0.08
        while (when := when + rng.expovariate(rate)) < end:
            card = rng.choice(cards)
            if rng.random() < 0.1:
                self.posted(when, account, txn_type="atm", channel="atm", card_id=card.row["card_id"],
                            amount=money(rng.choice([50, 100, 200])), description=maybe(rng, 0.5, "ATM withdrawal"))
            else:
                self.purchase(when, account, card, self.choose_merchant(when, gambler))

    def choose_merchant(self, when: float, gambler: bool) -> Entity:
        """A popular merchant more often, a gambler's a risky one half the time; no crypto while delisted."""
        risky = [m for m in self.merchants if m.row["is_high_risk"]]
        while True:
            merchant = self.rng.choice(risky) if gambler and self.rng.random() < 0.5 else zipf(self.rng, self.merchants, 0.6)
            if merchant.row["category"] != "crypto" or not CRYPTO_DELISTED <= when < CRYPTO_RELISTED + 600:
                return merchant

    def purchase(self, when: float, account: Entity, card: Entity, merchant: Entity) -> None:
        """A card purchase and what may follow it: a decline and its retry, or the purchase posted and
        maybe a card-testing burst at a second merchant within two minutes."""
        rng = self.rng
        low, high = CATEGORIES[merchant.row["category"]][2]
        amount = money(rng.uniform(low, high) if rng.random() > 0.03 else rng.uniform(1000, 4000))
        merchant_id = merchant.row["merchant_id"] if rng.random() > 0.01 else 901  # not onboarded yet
        label = f"{'POS' if rng.random() < 0.6 else 'ONLINE'} {merchant.row['name'].strip()}"
        row = dict(txn_type="purchase", channel=pick(rng, {"pos": 3, "online": 2}), card_id=card.row["card_id"],
                   merchant_id=merchant_id, amount=amount, description=maybe(rng, 0.15, label),
                   currency=CURRENCY.get(merchant.row["country"], "EUR") if rng.random() < 0.7
                   else account.row["currency"])
        if merchant_id == 901 and self.late_merchant is None:
            self.late_merchant = self.stream.add(
                "merchants", when + rng.uniform(5, 20) * DAY, merchant_id=901, name="Late Onboarded Shop",
                mcc="5999", category="retail", country="DE", city="Berlin", is_high_risk=False)
        if rng.random() < 0.06:
            self.txn(when, account, status="declined", posted_date=None, **row)
            if rng.random() < 0.5:
                self.settle(when + rng.uniform(30, 500), account, row)
            return
        self.settle(when, account, row)
        if rng.random() < 0.015:
            other = rng.choice([m for m in self.merchants if m is not merchant and m.row["category"] != "crypto"])
            burst = self.txn(when + rng.uniform(10, 110), account, status="posted", posted_date=day(when),
                             **{**row, "merchant_id": other.row["merchant_id"], "amount": money(rng.uniform(1, 15))})
            if rng.random() < 0.6:
                self.dispute(burst, "fraud")

    def settle(self, when: float, account: Entity, row: dict) -> None:
        """An authorised purchase: posted at once or pending for a day or two; maybe reversed, refunded,
        posted twice by the processor (most copies removed by reconciliation) or disputed."""
        rng = self.rng
        posted = when + rng.uniform(0.3, 2) * DAY
        pending = rng.random() < 0.3
        txn = self.txn(when, account, status="pending" if pending else "posted",
                       posted_date=None if pending else day(when + rng.uniform(0, 0.5) * DAY), **row)
        if pending and posted < HORIZON:
            txn.set(posted, status="posted", posted_date=day(posted))
        if rng.random() < 0.02:
            txn.set(when + rng.uniform(2, 10) * DAY, status="reversed")
        elif rng.random() < 0.04 and (refunded := when + rng.uniform(2, 30) * DAY) < HORIZON:
            self.txn(refunded, account, status="posted", posted_date=day(refunded),
                     **{**row, "txn_type": "refund", "amount": money(float(row["amount"]) * rng.choice([1, 0.5]))})
        if rng.random() < 0.01:
            copy = self.txn(when + 0.5, account, status="posted", posted_date=day(min(posted, HORIZON - 1)), **row)
            if rng.random() < 0.7:
                copy.delete(when + rng.uniform(1, 3) * DAY)
        if rng.random() < 0.03:
            self.dispute(txn, pick(rng, {"not_received": 3, "duplicate": 1, "quality": 2, "fraud": 1}))

    def dispute(self, txn: Entity, reason: str) -> None:
        """A dispute opened days later, resolved won (refunded) or lost weeks after; some withdrawn."""
        rng = self.rng
        opened = (txn.row["created_at"] - START).total_seconds() + rng.uniform(2, 20) * DAY
        if opened >= HORIZON:
            return
        self.dispute_id += 1
        dispute = self.stream.add("disputes", opened, dispute_id=self.dispute_id, txn_id=txn.row["txn_id"],
                                  reason=reason, status="open", opened_at=at(opened), resolved_on=None, refunded=None)
        resolved = opened + rng.uniform(3, 45) * DAY
        if rng.random() < 0.1:
            dispute.delete(opened + rng.uniform(1, 10) * DAY)
        elif resolved < HORIZON and rng.random() < 0.8:
            won = rng.random() < 0.6
            dispute.set(resolved, status="won" if won else "lost", resolved_on=day(resolved),
                        refunded=txn.row["amount"] if won else maybe(rng, 0.5, Decimal("0.00")))


def _seconds(date: dt.date, hour: int) -> float:
    """``date`` at ``hour`` o'clock as seconds after START."""
    return (dt.datetime.combine(date, dt.time(hour), dt.UTC) - START).total_seconds()
