"""The change stream of the user-view suite's ride-hailing app (``examples/user_views/mobility.sql``)
over half a year: cities, riders signing up (some referred by another rider), drivers with their
vehicles, promo codes, trips from request to drop-off, their payments and the ratings both ways.

What a dispatch database's change log carries and what breaks maintenance: a trip moving from
``requested`` to ``accepted`` to ``completed`` (each step a delete and an insert of the same key,
the driver and the fare filled in on the way), trips cancelled by the rider or the driver or left
without a driver, payments authorised then captured, failed and retried, refunded, and captured
twice by the processor (the copy mostly removed), ratings removed by moderation, a city launched
mid-way and a city paused (its rows deleted and restored: a group emptied and refilled), drivers
offboarded and erased while their trips remain (a dangling ``driver_id``), a driver whose vehicle
row arrives weeks after its first trip, a promo code used before its row exists, riders erased on
request, NULLs (phone, birth year, rating, surge, tip, payment method, seats) and names and codes
as apps send them (any case, padded).
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from planner.workloads.entity_stream import FIRST, HORIZON, LAST, Entity, Stream, at, maybe, money, pick, zipf
from planner.workloads.user_views import schema_ddl, table_shapes

DAY = 86_400.0
HOUR = 3600.0
#: name, country, time zone, launched on, base fare, weight (share of trips)
CITIES = [
    ("Berlin", "DE", "Europe/Berlin", "2019-03-01", "3.90", 5), ("Paris", "FR", "Europe/Paris", "2018-06-15", "4.20", 5),
    ("London", "GB", "Europe/London", "2017-01-10", "4.50", 4), ("New York", "US", "America/New_York", "2016-05-01",
                                                                  "5.00", 6),
    ("São Paulo", "BR", "America/Sao_Paulo", "2020-09-01", "2.10", 3), ("warsaw ", "PL", "Europe/Warsaw", "2022-04-01",
                                                                        None, 2),
    ("Lisbon", "PT", "Europe/Lisbon", "2024-03-11", "3.20", 2),
]
LISBON, LAUNCH = 7, 70 * DAY  # launched on day 70: no row, no trips before
WARSAW, PAUSE_FROM, PAUSE_TO = 6, 100 * DAY, 115 * DAY  # the city's row withdrawn for two weeks (a licence dispute)
#: make, model, class, seats, electric
MODELS = [("Toyota", "Prius", "standard", 4, False), ("Tesla", "Model 3", "comfort", 4, True),
          ("Mercedes", "E-Class", "black", 4, False), ("Ford", "Galaxy", "xl", 6, False), ("Skoda", "Octavia",
                                                                                          "standard", 4, False),
          ("Kia", "EV6", "comfort", 4, True), ("VW", "ID.Buzz", "xl", 7, True), ("BMW", "i5", "black", None, None)]
PRODUCTS = {"standard": "RideX", "comfort": "Comfort", "black": "Black", "xl": "XL"}
CANCEL_REASONS = ["rider_changed_mind", "driver_late", "Driver no-show", "wrong pickup", "RIDER_CHANGED_MIND"]
COMMENTS = ["Great driver!", "great ride", "car was dirty", "Late pickup", "  friendly  ", "GREAT MUSIC"]
#: code, city (None: every city), discount %, max discount, valid from day, to day
PROMOS = [("WELCOME10", None, 10, "5.00", 0, 182), ("BERLIN20", 1, 20, "8.00", 20, 60), ("PARIS15", 2, 15, "6.00", 30, 90),
          ("NYC25", 4, 25, "10.00", 45, 75), ("SUMMER", None, 12, "4.00", 150, 182), ("lisboa5", 7, 5, "2.50", 70, 182),
          ("FLASH50", None, 50, "15.00", 90, 92)]
LATE_PROMO = "SPRING30"  # used from day 75, its row only loaded on day 85


def mobility_stream(seed: int = 28) -> Stream:
    rng = random.Random(seed)
    stream = Stream(table_shapes(schema_ddl("mobility")))
    app = _App(rng, stream)
    when = 0.0
    while (when := when + rng.expovariate(1 / (HORIZON / 1700))) < HORIZON - HOUR:
        app.trip(when)
    return stream


class _App:
    """The reference data (cities, vehicles, drivers, promotions), riders as they sign up, and the
    trips, numbered."""

    def __init__(self, rng: random.Random, stream: Stream):
        self.rng, self.stream = rng, stream
        self.cities = [self._city(number, *spec) for number, spec in enumerate(CITIES, 1)]
        self.vehicles: list[Entity] = []
        self.vehicle_of: dict[int, Entity] = {}  # driver_id → the driver's vehicle
        self.until: dict[int, float] = {}  # driver_id → when the driver stops driving
        self.drivers = [self._driver(number) for number in range(1, 76)]
        self._promotions()
        self.riders: list[Entity] = []
        for _ in range(60):  # the riders from before the half year
            self._rider(rng.uniform(0, HOUR), before=True)
        self.trip_id = self.payment_id = 0

    def _city(self, number: int, name: str, country: str, zone: str, launched: str, fare: str | None,
              _weight: int) -> Entity:
        born = LAUNCH if number == LISBON else self.rng.uniform(0, 60)
        city = self.stream.add("cities", born, city_id=number, name=name, country=country, time_zone=zone,
                               launched_on=dt.date.fromisoformat(launched), base_fare=fare and Decimal(fare))
        if number == WARSAW:
            city.delete(PAUSE_FROM).restore(PAUSE_TO)
        if number == 2:
            city.set(80 * DAY, base_fare=Decimal("4.40"))
        return city

    def city_open(self, when: float) -> list[Entity]:
        return [c for c in self.cities if (c.row["city_id"] != LISBON or when >= LAUNCH)
                and (c.row["city_id"] != WARSAW or not PAUSE_FROM <= when < PAUSE_TO)]

    def _vehicle(self, born: float) -> Entity:
        rng = self.rng
        make, model, klass, seats, electric = zipf(rng, MODELS, 0.5)
        number = len(self.vehicles) + 1
        vehicle = self.stream.add(
            "vehicles", born, vehicle_id=number, plate=f"{rng.choice('BPLNSW')}-{rng.randint(100, 9999)}",
            make=make if rng.random() > 0.1 else make.upper(), model=model, model_year=maybe(rng, 0.05, rng.randint(2014, 2024)),
            vehicle_class=klass, seats=seats, is_electric=electric)
        self.vehicles.append(vehicle)
        return vehicle

    def _driver(self, number: int) -> Entity:
        """A driver in a city with a vehicle; most there from the start, some onboarded later; a few
        suspended, offboarded or erased; one whose vehicle row is loaded weeks late."""
        rng = self.rng
        weights = {c.row["city_id"]: CITIES[c.row["city_id"] - 1][5] for c in self.cities}
        city_id = pick(rng, weights)
        born = rng.uniform(0, HOUR) if rng.random() < 0.7 else rng.uniform(5, 150) * DAY
        if city_id == LISBON:
            born = max(born, LAUNCH - 5 * DAY)
        late_vehicle = number == 9
        vehicle = self._vehicle(born + (40 * DAY if late_vehicle else 0))
        onboarded = at(born).date() - dt.timedelta(days=rng.randint(0, 900) if born < HOUR else 0)
        driver = self.stream.add(
            "drivers", born, driver_id=number, city_id=city_id, vehicle_id=maybe(rng, 0.03, vehicle.row["vehicle_id"]),
            full_name=f"{rng.choice(FIRST)} {rng.choice(LAST)}", onboarded_on=onboarded, status="active",
            rating=maybe(rng, 0.1, round(rng.uniform(4.1, 5.0), 2)))
        self.vehicle_of[number] = vehicle
        self.until[number] = HORIZON
        roll = rng.random()
        if roll < 0.05:
            driver.set(born + rng.uniform(20, 100) * DAY, status="suspended")
        elif roll < 0.1:
            self.until[number] = born + rng.uniform(30, 120) * DAY
            driver.set(self.until[number], status="offboarded")
            if rng.random() < 0.5:
                driver.delete(self.until[number] + 10 * DAY)
        if rng.random() < 0.3:
            driver.set(born + rng.uniform(30, 170) * DAY, rating=round(rng.uniform(3.8, 5.0), 2))
        return driver

    def _promotions(self) -> None:
        for code, city_id, pct, cap, start, end in PROMOS:
            promo = self.stream.add("promotions", max(0.0, start * DAY - 2 * DAY), promo_code=code, city_id=city_id,
                                    discount_pct=pct, max_discount=Decimal(cap),
                                    valid_from=at(start * DAY).date(), valid_to=at(min(end, 181) * DAY).date())
            if code == "FLASH50":
                promo.delete(95 * DAY)  # withdrawn after the flash sale
        self.stream.add("promotions", 85 * DAY, promo_code=LATE_PROMO, city_id=None, discount_pct=30,
                        max_discount=None, valid_from=at(75 * DAY).date(), valid_to=at(120 * DAY).date())

    def _rider(self, born: float, before: bool = False) -> Entity:
        rng = self.rng
        number = len(self.riders) + 1
        first, last = rng.choice(FIRST), rng.choice(LAST)
        weights = {c.row["city_id"]: CITIES[c.row["city_id"] - 1][5] for c in self.city_open(born)}
        signup = born - rng.uniform(20, 700) * DAY if before else born
        domain = rng.choice(["gmail.com", "Yahoo.com", "icloud.com", "outlook.com"])
        referrer = rng.choice(self.riders).row["rider_id"] if self.riders and rng.random() < 0.25 else None
        rider = self.stream.add(
            "riders", born, rider_id=number, city_id=pick(rng, weights), full_name=f"{first} {last}",
            email=maybe(rng, 0.04, f"{first.lower()}.{last.lower()}{number}@{domain}"),
            phone=maybe(rng, 0.2, f"+{rng.randint(1, 99)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"),
            signup_at=at(signup), referred_by=referrer, is_premium=rng.random() < 0.1,
            birth_year=maybe(rng, 0.3, rng.randint(1950, 2006)))
        if rng.random() < 0.05:
            rider.set(born + rng.uniform(10, 120) * DAY, is_premium=True)
        if rng.random() < 0.02:
            rider.delete(born + rng.uniform(30, 150) * DAY)  # erased on request; the trips stay
        self.riders.append(rider)
        return rider

    def trip(self, when: float) -> None:
        """A request by a (new or returning) rider, and its outcome."""
        rng = self.rng
        if rng.random() < 0.12 or not self.riders:
            rider = self._rider(when - rng.uniform(60, 3 * DAY))
        else:
            rider = zipf(rng, self.riders, 0.7)
        cities = self.city_open(when)
        city = next((c for c in cities if c.row["city_id"] == rider.row["city_id"]), None)
        if city is None or rng.random() < 0.05:
            city = rng.choice(cities)  # travelling
        _Trip(self, rider, city, when).run()


class _Trip:
    """One trip: requested, then no driver, cancelled, or accepted, picked up and completed; paid and
    maybe rated."""

    def __init__(self, app: _App, rider: Entity, city: Entity, when: float):
        self.app, self.rng, self.stream = app, app.rng, app.stream
        self.rider, self.city, self.when = rider, city, when
        app.trip_id += 1
        self.trip_id = app.trip_id

    def driver(self) -> Entity | None:
        """A driver of the trip's city who is driving now; now and then one from another city (an
        airport run across the border of the licence area)."""
        driving = [d for d in self.app.drivers if d.events[0][0] <= self.when < self.app.until[d.row["driver_id"]]]
        here = [d for d in driving if d.row["city_id"] == self.city.row["city_id"]]
        if driving and (not here or self.rng.random() < 0.02):
            return self.rng.choice(driving)
        return zipf(self.rng, here, 0.4) if here else None

    def promo(self) -> str | None:
        rng = self.rng
        day_no = self.when / DAY
        if LAUNCH + 5 * DAY <= self.when < 120 * DAY and rng.random() < 0.05:
            return LATE_PROMO
        valid = [p for p in PROMOS if p[4] <= day_no < p[5] and p[1] in (None, self.city.row["city_id"])]
        return rng.choice(valid)[0] if valid and rng.random() < 0.15 else None

    def run(self) -> None:
        rng = self.rng
        driver = self.driver()
        vehicle = self.app.vehicle_of[driver.row["driver_id"]] if driver else None
        product = PRODUCTS[vehicle.row["vehicle_class"]] if vehicle else "RideX"
        trip = self.stream.add(
            "trips", self.when, trip_id=self.trip_id, rider_id=self.rider.row["rider_id"], driver_id=None,
            city_id=self.city.row["city_id"], product=product, status="requested", requested_at=at(self.when),
            pickup_at=None, dropoff_at=None, distance_km=None, fare=None,
            surge_multiplier=maybe(rng, 0.05, Decimal(pick(rng, {"1.00": 8, "1.20": 2, "1.50": 1, "2.10": 0.3}))),
            promo_code=self.promo(), cancel_reason=None)
        if driver is None or rng.random() < 0.04:
            trip.set(self.when + rng.uniform(60, 400), status="no_driver")
            return
        accepted = self.when + rng.uniform(5, 90)
        trip.set(accepted, status="accepted", driver_id=driver.row["driver_id"])
        if rng.random() < 0.1:
            trip.set(accepted + rng.uniform(30, 600), status="cancelled", cancel_reason=maybe(rng, 0.2, rng.choice(CANCEL_REASONS)))
            return
        pickup = accepted + rng.uniform(120, 900)
        distance = round(rng.lognormvariate(1.8, 0.6), 2)
        dropoff = pickup + distance / rng.uniform(12, 35) * HOUR
        if dropoff >= HORIZON:
            return
        surge = trip.row["surge_multiplier"] or Decimal("1.00")
        base = self.city.row["base_fare"] or Decimal("3.00")
        fare = money(float(base + Decimal(f"{distance * 1.35:.2f}") * surge))
        trip.set(dropoff, status="completed", pickup_at=at(pickup), dropoff_at=at(dropoff),
                 distance_km=distance if rng.random() > 0.02 else None, fare=fare)
        if rng.random() < 0.01:
            trip.set(dropoff + rng.uniform(1, 5) * DAY, fare=money(float(fare) * 0.5))  # fare adjusted by support
        self.pay(trip, dropoff, fare)
        self.rate(dropoff)

    def pay(self, trip: Entity, when: float, fare: Decimal) -> None:
        """Authorised then captured a minute later; a failed card retried with another method; a few
        refunded; the processor's double capture (the copy mostly removed by reconciliation)."""
        rng = self.rng
        method = maybe(rng, 0.03, pick(rng, {"card": 6, "wallet": 3, "cash": 1, "Apple Pay": 0.5}))
        tip = maybe(rng, 0.6, money(rng.choice([1, 2, 2, 3, 5]) * 1.0)) if method != "cash" else None
        promo = trip.row["promo_code"]
        amount = money(float(fare) * (0.85 if promo else 1.0))
        if rng.random() < 0.04:
            self.payment(when, method="card", amount=amount, tip=None, status="failed")
            method = "wallet"
        payment = self.payment(when + 5, method=method, amount=amount, tip=tip,
                               status="captured" if method == "cash" else "authorized")
        if method != "cash" and when + 65 < HORIZON:
            payment.set(when + 65, status="captured")
            if rng.random() < 0.03:
                payment.set(when + rng.uniform(1, 10) * DAY, status="refunded")
        if rng.random() < 0.015:
            copy = self.payment(when + 66, method=method, amount=amount, tip=tip, status="captured")
            if rng.random() < 0.7:
                copy.delete(when + rng.uniform(1, 4) * DAY)

    def payment(self, when: float, **row) -> Entity:
        self.app.payment_id += 1
        return self.stream.add("payments", when, payment_id=self.app.payment_id, trip_id=self.trip_id,
                               paid_at=at(when), **row)

    def rate(self, when: float) -> None:
        rng = self.rng
        if rng.random() > 0.65:
            return
        rated = when + rng.uniform(60, 2 * DAY)
        if rated >= HORIZON:
            return
        stars = pick(rng, {5: 12, 4: 5, 3: 2, 2: 1, 1: 1})
        rating = self.stream.add(
            "ratings", rated, trip_id=self.trip_id, driver_stars=maybe(rng, 0.05, stars),
            rider_stars=maybe(rng, 0.3, pick(rng, {5: 10, 4: 3, 3: 1})),
            comment=rng.choice(COMMENTS) if rng.random() < 0.15 else None, rated_at=at(rated))
        if rng.random() < 0.02:
            rating.delete(rated + rng.uniform(1, 20) * DAY)  # removed by moderation
