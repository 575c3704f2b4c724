"""Change streams for the user-view suite's two schemas: an online shop and a SaaS product's
clickstream, as their databases would emit them over half a year (2024-01-01 to 2024-06-30).

Seeded and small (a few thousand changes each), but with what real change streams carry and what
breaks maintenance: updates as a delete and an insert of the same key (an order moving from
``pending`` to ``paid`` to ``shipped``), deletes, child rows arriving before their parent or
outliving it (dangling foreign keys), NULLs in nullable columns, groups deleted entirely and
refilled later (a moderated product's reviews, the ``voucher`` payments, a feature flag
withdrawn), and, in the keyless ``events`` log, the tracker's duplicate rows and their removal.

Each row's life is an ``Entity`` (its versions, deletes and re-inserts in time); the stream is every
entity's changes in time order, numbered ``_seq`` with gaps (the format allows them).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import attrs

from planner.workloads.energy_stream import energy_stream
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
from planner.workloads.fintech_stream import fintech_stream
from planner.workloads.logistics_stream import logistics_stream
from planner.workloads.mobility_stream import mobility_stream
from planner.workloads.user_views import schema_ddl, table_shapes


def shop_stream(seed: int = 24) -> Stream:
    """The shop's half year: a category tree, a catalogue with price changes, customers (some erased),
    orders moving through their statuses, their lines, payments, shipments and reviews."""
    rng = random.Random(seed)
    stream = Stream(table_shapes(schema_ddl("shop")))
    _shop_regions(rng, stream)
    products = _shop_products(rng, stream)
    customers = _shop_customers(rng, stream)
    ids, buyers = _ShopIds(), set()
    for customer_id, born, _ in customers:
        orders = 0 if rng.random() < 0.2 else min(1 + int(rng.expovariate(0.6)), 7)
        if customer_id in (1, 2):
            orders = 6  # regulars: repeat purchases within days
        placed = born
        for _ in range(orders):
            placed += rng.expovariate(1 / (12 * 86_400)) + 600
            if placed >= HORIZON - 3600:
                break
            ids.order += 1
            buyers.add(customer_id)
            _shop_order(rng, stream, ids, customer_id, born, placed, products)
    for _ in range(6):  # reviews of gifts, by customers who never ordered themselves
        customer_id, born, _ = rng.choice([c for c in customers if c[0] not in buyers])
        ids.review += 1
        written = born + rng.uniform(1, 30) * 86_400
        stream.add("reviews", written, review_id=ids.review, product_id=zipf(rng, products).row["product_id"],
                   customer_id=customer_id, rating=rng.randint(1, 5), title=None, created_at=at(written))
    return stream


@attrs.define
class _ShopIds:
    """The last id given to the shop's orders, payments, shipments and reviews."""

    order: int = 1000
    payment: int = 0
    shipment: int = 0
    review: int = 0


def _shop_regions(rng: random.Random, stream: Stream) -> None:
    regions = [("North", "DE"), ("South", "DE"), ("Ile-de-France", "FR"), ("Occitanie", "FR"),
               ("Lombardy", "IT"), ("Catalonia", "ES"), ("Wales", "UK"), ("Ontario", "CA")]
    region_entities = [stream.add("regions", rng.uniform(0, 3600), region_id=i + 1, name=name, country=country)
                       for i, (name, country) in enumerate(regions)]
    # a region closed for two months and reopened: its customers' orders dangle meanwhile
    region_entities[6].delete(60 * 86_400).restore(120 * 86_400)


def _shop_products(rng: random.Random, stream: Stream) -> list[Entity]:
    """The category tree, then the catalogue: 60 products (some repriced, retired or removed) and four
    new arrivals nobody orders."""
    tops = [(1, "Electronics", "ELC"), (2, "Home", "HOM"), (3, "Outdoor", "OUT"), (4, "Books", "BOK")]
    children = [(5, "Phones", 1), (6, "Laptops", 1), (7, "Kitchen", 2), (8, "Garden", 2), (9, "Camping", 3),
                (10, "Fiction", 4), (11, "Cookbooks", 4), (12, "Audio", 1)]
    for category_id, name, _ in tops:
        stream.add("categories", 7200 + category_id, category_id=category_id, name=name, parent_id=None)
    for category_id, name, parent in children:
        # one child category arrives before its parent
        stream.add("categories", 100.0 if category_id == 10 else 7300 + category_id,
                   category_id=category_id, name=name, parent_id=parent)
    family = {category_id: code for category_id, _, code in tops}
    family.update({category_id: family[parent] for category_id, _, parent in children})
    brands = ["Acme", "Globex", "Initech", "Umbrella", "Hooli"]
    products = []
    for product_id in range(1, 61):
        category = rng.choice([c for c, *_ in tops + children])
        price = money(rng.choice([rng.uniform(4, 20), rng.uniform(20, 100), rng.uniform(100, 400)]))
        sku = f"{family[category]}-{product_id:05d}" if rng.random() > 0.05 else f"misc_{product_id:04d}"
        born = rng.uniform(3 * 3600, 20 * 86_400) if product_id > 50 else rng.uniform(3 * 3600, 86_400)
        product = stream.add(
            "products", born, product_id=product_id, sku=sku, name=f"{rng.choice(brands)} item {product_id}",
            category_id=category, brand=maybe(rng, 0.1, rng.choice(brands)), list_price=price,
            cost=money(float(price) * rng.uniform(0.5, 0.75)), weight_kg=maybe(rng, 0.05, round(rng.uniform(0.1, 12), 3)),
            is_active=True, created_at=at(born))
        if rng.random() < 0.15:  # a price change
            product.set(rng.uniform(30, 150) * 86_400, list_price=money(float(price) * rng.uniform(0.8, 1.2)))
        if rng.random() < 0.06:
            product.set(rng.uniform(60, 170) * 86_400, is_active=False)
        if rng.random() < 0.03:
            product.delete(rng.uniform(90, 180) * 86_400)
        products.append(product)
    for product_id in range(61, 65):  # listed but never ordered: new arrivals nobody has found yet
        born = rng.uniform(86_400, HORIZON)
        stream.add("products", born, product_id=product_id, sku=f"HOM-{product_id:05d}", name=f"New item {product_id}",
                   category_id=7, brand="Hooli", list_price=Decimal("24.90"), cost=Decimal("12.00"), weight_kg=1.5,
                   is_active=True, created_at=at(born))
    return products


def _shop_customers(rng: random.Random, stream: Stream) -> list[tuple[int, float, Entity]]:
    """120 customers (id, signup time, entity): messy emails and names, some changed or erased."""
    domains = ["gmail.com", "Yahoo.com", "outlook.com", "shop-mail.de", "ACME.io"]
    customers = []
    for customer_id in range(1, 121):
        born = rng.uniform(3600, HORIZON * 0.9) if customer_id > 30 else rng.uniform(3600, 10 * 86_400)
        first, last = rng.choice(FIRST), rng.choice(LAST)
        email = maybe(rng, 0.03, f"{first.lower()}.{last.lower()}{customer_id}@{rng.choice(domains)}")
        if email is not None and rng.random() < 0.1:
            email = f" {email.upper()} "
        customer = stream.add(
            "customers", born, customer_id=customer_id, email=email,
            first_name=f"  {first.lower()}" if rng.random() < 0.1 else first, last_name=last,
            region_id=maybe(rng, 0.05, rng.randint(1, 8)), signup_date=day(born), created_at=at(born),
            is_vip=maybe(rng, 0.05, rng.random() < 0.1))
        if rng.random() < 0.1:
            customer.set(born + rng.uniform(5, 100) * 86_400, email=f"{first.lower()}{customer_id}@gmail.com")
        if rng.random() < 0.05:
            customer.set(born + rng.uniform(10, 60) * 86_400, is_vip=True)
        if rng.random() < 0.03:  # erased on request: the orders stay, dangling
            customer.delete(born + rng.uniform(30, 120) * 86_400)
        customers.append((customer_id, born, customer))
    return customers


def _shop_order(rng: random.Random, stream: Stream, ids: _ShopIds, customer_id: int, born: float, placed: float,
                products: list[Entity]) -> None:
    """One order's life: placed with its lines, cancelled or paid, shipped, delivered, reviewed."""
    ordered = stream.add(
        "orders", placed if rng.random() > 0.03 else born - 60,  # a few orders before their customer
        order_id=ids.order, customer_id=customer_id, order_date=day(placed), created_at=at(placed),
        status="pending", channel=pick(rng, {"web": 5, "app": 3, "phone": 1, "marketplace": 1}),
        coupon_code=maybe(rng, 0.85, rng.choice(["WELCOME10", "SPRING", "VIP20"])),
        shipping_fee=maybe(rng, 0.03, rng.choice([Decimal("0.00"), Decimal("4.99"), Decimal("9.99")])))
    total, lines = _shop_order_lines(rng, stream, ids.order, placed, products)
    if rng.random() < 0.07:
        ordered.set(placed + rng.uniform(600, 86_400), status="cancelled")
        return
    paid = _shop_payments(rng, stream, ids, placed, total)
    ordered.set(paid, status="paid")
    if rng.random() < 0.2 or paid + 86_400 >= HORIZON:
        return
    shipped = paid + rng.uniform(0.3, 4) * 86_400
    ids.shipment += 1
    shipment = stream.add("shipments", shipped, shipment_id=ids.shipment, order_id=ids.order,
                          carrier=pick(rng, {"DHL": 3, "UPS": 2, "DPD": 1}), shipped_date=day(shipped),
                          delivered_date=None, tracking_code=f"TRK{ids.shipment:07d}")
    ordered.set(shipped, status="shipped")
    if rng.random() < 0.15 or shipped + 6 * 86_400 >= HORIZON:
        return
    delivered = shipped + rng.uniform(1, 6) * 86_400
    shipment.set(delivered, delivered_date=day(delivered))
    ordered.set(delivered, status="delivered")
    if rng.random() < 0.45:
        _shop_review(rng, stream, ids, customer_id, delivered, lines, products)


def _shop_order_lines(rng: random.Random, stream: Stream, order_id: int, placed: float,
                      products: list[Entity]) -> tuple[Decimal, list[Entity]]:
    """One to four lines (a few before their order, one sometimes removed): the order's total and lines."""
    total = Decimal(0)
    lines = []
    for line_no in range(1, rng.randint(1, 4) + 1):
        product = zipf(rng, products, 0.9)
        quantity = rng.choice([1, 1, 1, 2, 3, 5])
        price = product.row["list_price"]
        discount = money(float(price) * 0.1) if rng.random() < 0.2 else Decimal("0.00")
        total += quantity * price - discount
        line_at = placed + line_no if rng.random() > 0.03 else placed - 30  # a line before its order
        line = stream.add("order_items", line_at, order_id=order_id, line_no=line_no,
                          product_id=product.row["product_id"], quantity=quantity, unit_price=price,
                          discount=discount)
        lines.append(line)
    if rng.random() < 0.05:  # a line removed before shipping
        rng.choice(lines).delete(placed + 1800)
    return total, lines


def _shop_payments(rng: random.Random, stream: Stream, ids: _ShopIds, placed: float, total: Decimal) -> float:
    """A failed attempt sometimes, then the captured payment (sometimes half the total); vouchers paused
    for a while. Returns when the order was paid."""
    paid = placed + rng.uniform(60, 7200)
    method = pick(rng, {"card": 6, "paypal": 3, "voucher": 1, "bank_transfer": 1})
    if method == "voucher" and 110 * 86_400 <= paid < 150 * 86_400:
        method = "card"  # the voucher scheme is paused: no voucher payments meanwhile
    attempts = []
    if rng.random() < 0.15:
        ids.payment += 1
        attempts.append(stream.add("payments", paid - 30, payment_id=ids.payment, order_id=ids.order,
                                   method=method, amount=total, status="failed", paid_at=at(paid - 30)))
    ids.payment += 1
    amount = total if rng.random() > 0.1 else money(float(total) * 0.5)
    attempts.append(stream.add("payments", paid, payment_id=ids.payment, order_id=ids.order, method=method,
                               amount=amount, status="captured", paid_at=at(paid)))
    if method == "voucher" and paid < 110 * 86_400:  # and its earlier payments voided while it is paused
        for attempt in attempts:
            attempt.delete(120 * 86_400 + rng.uniform(0, 3600)).restore(150 * 86_400 + rng.uniform(0, 3600))
    return paid


def _shop_review(rng: random.Random, stream: Stream, ids: _ShopIds, customer_id: int, delivered: float,
                 lines: list[Entity], products: list[Entity]) -> None:
    """A review of the order's first line: the best seller's wait out its moderation; a poorly made
    brand rates low."""
    ids.review += 1
    written = delivered + rng.uniform(1, 10) * 86_400
    best_seller = lines[0].row["product_id"] == products[0].row["product_id"]
    if best_seller and 100 * 86_400 <= written < 130 * 86_400:
        written += 30 * 86_400  # reviews of the best seller wait while it is under moderation
    poorly_made = products[lines[0].row["product_id"] - 1].row["brand"] == "Umbrella"
    rating = pick(rng, {5: 1, 4: 1, 3: 1, 2: 3, 1: 3} if poorly_made else {5: 5, 4: 3, 3: 1, 2: 1, 1: 1})
    title = maybe(rng, 0.1, rng.choice(["Great!", "Does the job", "Refund requested", "Broke after a week",
                                         "Love it", "refund please", "OK"]))
    review = stream.add("reviews", written, review_id=ids.review,
                        product_id=lines[0].row["product_id"], customer_id=customer_id, rating=rating,
                        title=title, created_at=at(written))
    if best_seller and written < 100 * 86_400:  # hidden for moderation, then shown again
        review.delete(100 * 86_400 + rng.uniform(0, 600)).restore(130 * 86_400 + rng.uniform(0, 600))


def saas_stream(seed: int = 25) -> Stream:
    """The SaaS product's half year: accounts on trials converting to plans, upgrades and churn, their
    users' sessions and events (with the tracker's duplicates), feature flags, invoices and tickets."""
    rng = random.Random(seed)
    stream = Stream(table_shapes(schema_ddl("saas")))
    plans = {1: ("Free", "free", "0.00", 1), 2: ("Starter", "self-serve", "29.00", 3),
             3: ("Team", "self-serve", "99.00", 10), 4: ("Business", "sales-led", "399.00", 25),
             5: ("Enterprise", "sales-led", "1500.00", 100)}
    for plan_id, (name, tier, price, seats) in plans.items():
        plan = stream.add("plans", plan_id, plan_id=plan_id, name=name, tier=tier, monthly_price=Decimal(price),
                          seats_included=seats)
        if name == "Team":
            plan.set(90 * 86_400, monthly_price=Decimal("109.00"))
    industries = ["software", "retail", "finance", "health", "education"]
    countries = ["US", "DE", "FR", "UK", "BR", "JP"]
    subscription_id = user_id = session_number = flag_id = invoice_id = ticket_id = 0
    for account_id in range(1, 41):
        created = rng.uniform(3600, 10 * 86_400) if account_id <= 12 else rng.uniform(86_400, HORIZON * 0.8)
        domain = f"company{account_id}.{rng.choice(['com', 'io', 'de'])}"
        account = stream.add(
            "accounts", created, account_id=account_id, name=f"Company {account_id}",
            domain=domain.upper() if rng.random() < 0.1 else domain,
            industry=maybe(rng, 0.1, rng.choice(industries)), country=maybe(rng, 0.05, rng.choice(countries)),
            created_at=at(created), is_internal=account_id in (1, 17))
        if account_id == 33:
            account.delete(140 * 86_400)  # closed: its users and events dangle
        # every seventh account is a lead that never subscribes
        subscriptions = [] if account_id % 7 == 0 else _subscribe(rng, stream, account_id, created, plans, subscription_id)
        subscription_id += len(subscriptions)
        for subscription, ends in subscriptions:
            for invoice in _invoices(rng, stream, subscription, ends, invoice_id):
                invoice_id = invoice.row["invoice_id"]
        flag_id = _saas_flags(rng, stream, account_id, created, flag_id)
        account_users = []
        for _ in range(rng.randint(1, 6)):
            user_id += 1
            signup = created + rng.expovariate(1 / (8 * 86_400))
            if signup >= HORIZON - 86_400:
                continue
            user = stream.add(
                "users", signup if rng.random() > 0.04 else created - 300,  # a user before the account
                user_id=user_id, account_id=account_id,
                email=f"{rng.choice(FIRST).lower()}{user_id}@{domain if rng.random() > 0.15 else 'gmail.com'}",
                role=maybe(rng, 0.2, rng.choice(["admin", "member", "viewer"])), signup_at=at(signup),
                signup_date=day(signup), last_seen_date=day(signup), is_active=rng.random() < 0.9)
            account_users.append(user)
            session_number = _sessions(rng, stream, user, signup, session_number)
            if rng.random() < 0.03:
                user.delete(signup + rng.uniform(20, 80) * 86_400)
        ticket_id = _saas_tickets(rng, stream, account_id, created, account_users, ticket_id)
    return stream


def _saas_flags(rng: random.Random, stream: Stream, account_id: int, created: float, last_id: int) -> int:
    """Up to three feature flags of an account, some toggled; the AI beta withdrawn from every account
    for a while. Returns the last flag id given."""
    flag_id = last_id
    for flag_name in rng.sample(["new_reports", "beta_ai", "dark_mode", "sso"], rng.randint(0, 3)):
        flag_set = created + rng.uniform(0, 30) * 86_400
        if flag_name == "beta_ai" and flag_set >= 100 * 86_400:
            continue  # the beta takes no new accounts
        flag_id += 1
        flag = stream.add("feature_flags", flag_set, flag_id=flag_id, account_id=account_id, flag_name=flag_name,
                          enabled=rng.random() < 0.6, updated_at=at(flag_set))
        if rng.random() < 0.3 and flag_name != "beta_ai":
            toggled = flag_set + rng.uniform(5, 60) * 86_400
            flag.set(toggled, enabled=not flag.row["enabled"], updated_at=at(toggled))
        if flag_name == "beta_ai":  # the beta withdrawn from every account, then relaunched
            flag.delete(110 * 86_400).restore(150 * 86_400)
    return flag_id


def _saas_tickets(rng: random.Random, stream: Stream, account_id: int, created: float, account_users: list[Entity],
                  last_id: int) -> int:
    """Up to four support tickets of an account's users, most closed with a satisfaction score.
    Returns the last ticket id given."""
    ticket_id = last_id
    for _ in range(rng.randint(0, 4)):
        if not account_users:
            break
        ticket_id += 1
        opened = created + rng.uniform(1, 150) * 86_400
        if opened >= HORIZON - 86_400:
            continue
        ticket = stream.add("support_tickets", opened, ticket_id=ticket_id, account_id=account_id,
                            user_id=rng.choice(account_users).row["user_id"],
                            priority=pick(rng, {"low": 2, "normal": 4, "high": 2, "urgent": 1}),
                            opened_at=at(opened), closed_at=None, csat=None)
        if rng.random() < 0.75:
            closed = opened + rng.uniform(0.5, 120) * 3600
            ticket.set(closed, closed_at=at(closed), csat=maybe(rng, 0.4, rng.randint(1, 5)))
    return ticket_id


def _subscribe(rng: random.Random, stream: Stream, account_id: int, created: float,
               plans: dict[int, tuple], last_id: int) -> list[tuple[Entity, float]]:
    """An account's subscriptions: a trial (most accounts) converting or expiring, a paid plan, maybe an
    upgrade or a cancellation. Returns each subscription with the time it stops billing."""
    ends: dict[Entity, float] = {}

    def subscribe(start: float, plan_id: int, status: str) -> Entity:
        seats = plans[plan_id][3] + rng.choice([0, 0, 2, 5])
        mrr = Decimal(0) if status == "trial" else Decimal(plans[plan_id][2])
        entity = stream.add("subscriptions", start, subscription_id=last_id + len(ends) + 1, account_id=account_id,
                            plan_id=plan_id, status=status, started_on=day(start), ended_on=None, seats=seats, mrr=mrr)
        ends[entity] = HORIZON
        return entity

    start = created + 3600
    if rng.random() < 0.7:
        trial = subscribe(start, 3, "trial")
        start += 14 * 86_400
        ends[trial] = start
        trial.set(start, status="expired", ended_on=day(start))
        if rng.random() < 0.35 or start >= HORIZON:
            return list(ends.items())
    plan_id = pick(rng, {1: 1, 2: 3, 3: 3, 4: 2, 5: 1})
    paid = subscribe(start, plan_id, "active")
    change = start + rng.uniform(20, 120) * 86_400
    if change < HORIZON and rng.random() < 0.35:
        upgrade = plan_id < 5 and rng.random() < 0.6  # the old subscription ends, a new one starts
        paid.set(change, status="upgraded" if upgrade else "cancelled", ended_on=day(change))
        ends[paid] = change
        if upgrade:
            subscribe(change, plan_id + 1, "active")
    return list(ends.items())


def _invoices(rng: random.Random, stream: Stream, subscription: Entity, ends: float, last_id: int) -> list[Entity]:
    """Monthly invoices of a paid subscription while it runs; most are paid within weeks."""
    if subscription.row["mrr"] == 0:
        return []
    invoices = []
    issued = (dt.datetime.combine(subscription.row["started_on"], dt.time(), dt.UTC) - START).total_seconds()
    issued += 3600
    while issued < min(ends, HORIZON):
        amount = subscription.row["mrr"]
        invoice = stream.add("invoices", issued, invoice_id=last_id + len(invoices) + 1,
                             account_id=subscription.row["account_id"],
                             subscription_id=subscription.row["subscription_id"], issued_on=day(issued),
                             due_on=day(issued + 14 * 86_400), paid_on=None, amount=amount,
                             tax=money(float(amount) * 0.2), status="open")
        paid = issued + rng.uniform(0, 40) * 86_400
        if rng.random() < 0.85 and paid < HORIZON:
            invoice.set(paid, paid_on=day(paid), status="paid")
        elif issued + 14 * 86_400 < HORIZON:
            invoice.set(issued + 14 * 86_400, status="overdue")
        invoices.append(invoice)
        issued += 30 * 86_400
    return invoices


PAGES = ["/dashboard", "/projects", "/projects/new", "/reports", "/settings/billing", "/Dashboard"]


def _sessions(rng: random.Random, stream: Stream, user: Entity, signup: float, number: int) -> int:
    """A user's sessions and their events (the first session signs up); returns the last session number.
    A third of the users come back exactly a week after signing up (day-7 retention)."""
    starts = [signup + 60]
    if rng.random() < 0.33:
        starts.append(signup + 7 * 86_400 + rng.uniform(60, 3600))
    moment = signup
    for _ in range(min(int(rng.expovariate(0.25)), 12)):
        moment += rng.expovariate(1 / (6 * 86_400))
        starts.append(moment)
    last_seen = signup
    for start in sorted(s for s in starts if s < HORIZON - 3600):
        number += 1
        session_id = f"s-{number:06d}"
        device = pick(rng, {"web": 5, "desktop": 2, "ios": 2, "android": 2, "tv": 0.3})
        if device == "tv" and 90 * 86_400 <= start < 140 * 86_400:
            device = "web"  # the TV app is withdrawn meanwhile
        duration = int(rng.expovariate(1 / 600)) + 5
        session = stream.add("sessions", start, session_id=session_id, user_id=user.row["user_id"],
                             started_at=at(start), session_date=day(start),
                             duration_seconds=maybe(rng, 0.03, duration), device=device,
                             country=rng.choice(["US", "DE", "FR", "UK", "BR", "JP"]))
        if device == "tv" and start < 90 * 86_400:  # the TV app's sessions purged as bot traffic, then restored
            session.delete(100 * 86_400).restore(140 * 86_400)
        names = ["signup"] if start == signup + 60 else []
        names += ["page_view"] + [pick(rng, {"page_view": 6, "project_created": 1, "invite_sent": 1,
                                              "report_viewed": 1.5, "purchase": 0.7})
                                  for _ in range(rng.randint(0, 4))]
        for offset, name in enumerate(names):
            when = start + offset * rng.uniform(5, duration / max(len(names), 1) + 5)
            page = rng.choice(PAGES) if name in ("page_view", "report_viewed") else None
            url = None if page is None else (
                f"https://app.example.com{page}" + (f"?ref=mail{rng.randint(1, 3)}" if rng.random() < 0.3 else ""))
            server_side = name == "purchase" and rng.random() < 0.3  # logged by the billing service: no session
            row = dict(user_id=user.row["user_id"], session_id=None if server_side else session_id, event_name=name,
                       event_time=at(when), event_date=day(when), page_url=url,
                       revenue=round(rng.choice([9.99, 19.5, 49.0, 4.75]), 2) if name == "purchase" else None)
            event = stream.add("events", when, **row)
            if rng.random() < 0.05:  # the tracker's retry: the same row twice, the copy removed by a later dedup
                copy = stream.add("events", when + 0.5, **row)
                if rng.random() < 0.5:
                    copy.delete(when + rng.uniform(1, 20) * 86_400)
            if rng.random() < 0.02:  # a bot's hit, filtered out later
                event.delete(when + rng.uniform(1, 5) * 86_400)
            last_seen = max(last_seen, when)
    if last_seen > signup + 86_400:
        user.set(last_seen, last_seen_date=day(last_seen))
    return number


STREAMS: dict[str, Callable[[int], Stream]] = {"shop": shop_stream, "saas": saas_stream, "fintech": fintech_stream,
                                               "logistics": logistics_stream, "mobility": mobility_stream,
                                               "energy": energy_stream}
SEEDS = {"shop": 24, "saas": 25, "fintech": 26, "logistics": 27, "mobility": 28, "energy": 29}


def write_streams(out_dir: Path, schemas: tuple[str, ...] = ("shop", "saas")) -> dict[str, dict[str, int]]:
    """Each schema's stream under ``out_dir/<schema>/``; returns the changes per table per schema."""
    return {schema: STREAMS[schema](SEEDS[schema]).write(out_dir / schema) for schema in schemas}
