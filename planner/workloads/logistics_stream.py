"""The change stream of the user-view suite's parcel network (``examples/user_views/logistics.sql``)
over half a year: warehouses and carriers, the lanes between warehouses, shipments with their
parcels, and every parcel's scans from pickup to delivery.

What a network's change log carries and what breaks maintenance: shipments moving from ``created``
to ``in_transit`` to ``delivered`` (a delete and an insert of the same key), exceptions that resolve,
return to sender or leave a parcel stuck, cancellations, lanes reassigned to another carrier, a
carrier deactivated while its shipments are on the road and a carrier added without lanes, a depot
removed from the master data while parcels are still scanned there (a dangling ``warehouse_id``),
parcels arriving before their shipment or removed from it, a partner carrier that reports deliveries
without a delivered scan, NULLs (priority, weight, declared value, device, capacity), the scanners'
duplicate rows in the keyless log (some removed by a dedup job), and a hub's ten days of night-shift
scans purged as test data and restored after an audit (a group emptied and refilled).
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from planner.workloads.entity_stream import HORIZON, Entity, Stream, at, day, maybe, money, pick, zipf
from planner.workloads.user_views import schema_ddl, table_shapes

DAY = 86_400.0
HOUR = 3600.0
#: code, city (as the master data spells it), country, kind, capacity, opened on
WAREHOUSES = [
    ("BER1", "Berlin", "DE", "hub", 5000, "2016-04-01"), ("HAM1", "hamburg ", "DE", "hub", 3000, "2018-09-15"),
    ("MUC1", "München", "DE", "hub", 4000, "2017-02-01"), ("CGN2", "Köln", "DE", "depot", 800, "2020-06-01"),
    ("PAR1", "Paris", "FR", "hub", 4500, "2015-01-10"), ("LYS2", " lyon", "FR", "depot", 600, "2021-03-01"),
    ("AMS1", "Amsterdam", "NL", "hub", 3500, "2016-11-01"), ("RTM2", "Rotterdam", "NL", "depot", None, "2022-05-01"),
    ("WAW1", "Warsaw", "PL", "hub", 2500, "2019-08-01"), ("POZ2", "POZNAN", "PL", "depot", 0, "2023-01-20"),
    ("MIL1", "Milano", "IT", "hub", 2800, "2018-01-01"), ("MAD1", "Madrid", "ES", "hub", 3000, "2017-07-01"),
    ("BCN2", "Barcelona", "ES", None, 700, "2022-09-01"), ("VIE3", "Wien", "AT", "depot", 500, "2024-03-01"),
]
#: name, service level, cost per kg
CARRIERS = [("DHL Freight", "standard", "0.450"), ("UPS", "express", "0.900"), ("DPD", "standard", "0.400"),
            ("GLS", "economy", "0.300"), ("PostNL", "economy", "0.280"), ("FedEx", "express", "1.100"),
            ("Raben", "economy", "0.250")]
PARTNER_CARRIER = 5  # reports deliveries through its API: no scans at the destination
RETIRED_CARRIER, RETIRED = 7, 120 * DAY
DEPOT_REMOVED, REMOVED = 4, 150 * DAY  # CGN2 leaves the master data; its scanners keep scanning
PURGED_HUB, PURGE_FROM, PURGE_TO = 7, 60 * DAY, 70 * DAY  # AMS1's night shift: purged on day 75, back on day 110
PROMISED_DAYS = {"express": 1, "standard": 3, "economy": 5, None: 4}
NOTES = ["damaged box", "Damaged - wet", "address unreadable", "customs hold", "DAMAGED corner"]


def logistics_stream(seed: int = 27) -> Stream:
    rng = random.Random(seed)
    stream = Stream(table_shapes(schema_ddl("logistics")))
    network = _Network(rng, stream)
    for _ in range(700):
        network.shipment(rng.uniform(0, HORIZON - HOUR))
    return stream


class _Network:
    """The master data (warehouses, carriers, lanes) and the shipments booked on it, numbered."""

    def __init__(self, rng: random.Random, stream: Stream):
        self.rng, self.stream = rng, stream
        self.warehouses = [self._warehouse(number, *spec) for number, spec in enumerate(WAREHOUSES, 1)]
        self.carriers = [self._carrier(number, *spec) for number, spec in enumerate(CARRIERS, 1)]
        stream.add("carriers", 140 * DAY, carrier_id=8, name="Nordic Express", service_level="express",
                   cost_per_kg=Decimal("0.950"), is_active=True)  # signed, no lane yet
        self.routes = self._routes()
        self.shipment_id = self.parcel_id = 0
        self.customers = [f"CUST-{n:04d}" for n in range(1, 41)]

    def _warehouse(self, number: int, code: str, city: str, country: str, kind: str | None,
                   capacity: int | None, opened: str) -> Entity:
        born = 60 * DAY if code == "VIE3" else self.rng.uniform(0, HOUR)
        warehouse = self.stream.add("warehouses", born, warehouse_id=number, code=code, city=city, country=country,
                                    kind=kind, capacity=capacity, opened_on=dt.date.fromisoformat(opened))
        if number == DEPOT_REMOVED:
            warehouse.delete(REMOVED)
        return warehouse

    def _carrier(self, number: int, name: str, level: str, cost: str) -> Entity:
        carrier = self.stream.add("carriers", self.rng.uniform(0, HOUR), carrier_id=number, name=name,
                                  service_level=level, cost_per_kg=Decimal(cost), is_active=True)
        if name == "DPD":
            carrier.set(90 * DAY, cost_per_kg=Decimal("0.430"))
        if number == RETIRED_CARRIER:
            carrier.set(RETIRED, is_active=False)
        return carrier

    def _routes(self) -> list[Entity]:
        """Four lanes out of every hub to other warehouses; a few reassigned to another carrier."""
        rng = self.rng
        routes = []
        hubs = [w for w in self.warehouses if w.row["kind"] == "hub"]
        for origin in hubs:
            for dest in rng.sample([w for w in self.warehouses if w is not origin], 4):
                same_country = origin.row["country"] == dest.row["country"]
                distance = rng.randint(40, 650) if same_country else rng.randint(450, 2100)
                born = max(rng.uniform(0, HOUR), 61 * DAY if dest.row["code"] == "VIE3" else 0)
                carrier_id = zipf(rng, list(range(1, len(CARRIERS) + 1)), 0.5)
                route = self.stream.add(
                    "routes", born, route_id=len(routes) + 1, origin_warehouse_id=origin.row["warehouse_id"],
                    dest_warehouse_id=dest.row["warehouse_id"], carrier_id=carrier_id, distance_km=distance,
                    planned_hours=maybe(rng, 0.03, round(distance / 65 + 6, 1)))
                if rng.random() < 0.1 and carrier_id != RETIRED_CARRIER:
                    route.set(100 * DAY, carrier_id=rng.choice([1, 2, 3]))
                routes.append(route)
        return routes

    def shipment(self, created: float) -> None:
        """A shipment on a lane open at ``created``, its parcels, and its journey."""
        rng = self.rng
        route = zipf(rng, [r for r in self.routes if r.events[0][0] <= created], 0.7)
        customer = zipf(rng, self.customers, 0.9)
        customer = rng.choice([customer, customer.lower(), f"{customer} "]) if rng.random() < 0.1 else customer
        priority = maybe(rng, 0.02, pick(rng, {"express": 2, "standard": 5, "economy": 3}))
        self.shipment_id += 1
        shipment = self.stream.add(
            "shipments", created, shipment_id=self.shipment_id, route_id=route.row["route_id"],
            customer_ref=maybe(rng, 0.03, customer), priority=priority, status="created", created_at=at(created),
            ship_date=None, promised_date=day(created + PROMISED_DAYS[priority] * DAY), delivered_at=None,
            declared_value=maybe(rng, 0.05, money(rng.uniform(20, 3000))))
        parcels = [self.parcel(shipment, created) for _ in range(pick(rng, {1: 12, 2: 5, 3: 2, 4: 1}))]
        if rng.random() < 0.03:
            shipment.set(created + rng.uniform(1, 10) * HOUR, status="cancelled")
            return
        _Journey(self, shipment, route, parcels, created).travel()

    def parcel(self, shipment: Entity, created: float) -> Entity:
        rng = self.rng
        self.parcel_id += 1
        barcode = f"JJ{self.parcel_id:09d}{rng.choice(['DE', 'NL', 'FR', 'PL'])}"
        if rng.random() < 0.05:
            barcode = rng.choice([barcode.lower(), barcode[:-2], f"X{self.parcel_id}"])
        heavy = rng.random() < 0.08
        parcel = self.stream.add(
            "parcels", created + 60 if rng.random() > 0.03 else created - 300, parcel_id=self.parcel_id,
            shipment_id=shipment.row["shipment_id"], barcode=barcode,
            weight_kg=maybe(rng, 0.02, round(rng.uniform(20, 40) if heavy else rng.uniform(0.2, 15), 3)),
            length_cm=rng.randint(10, 120), width_cm=rng.randint(10, 80), height_cm=rng.randint(5, 60),
            is_fragile=rng.random() < 0.12)
        if rng.random() < 0.02:
            parcel.delete(created + rng.uniform(1, 30) * HOUR)  # taken out of the shipment
        return parcel


class _Journey:
    """A shipment's way along its lane: pickup, sorting and loading at the origin, the line haul,
    receipt, delivery round and delivery at the destination; an exception on the way may resolve,
    send the parcels back or leave them stuck. Each parcel's scans follow the shipment's clock."""

    def __init__(self, network: _Network, shipment: Entity, route: Entity, parcels: list[Entity], created: float):
        self.network, self.rng, self.stream = network, network.rng, network.stream
        self.shipment, self.route, self.parcels = shipment, route, parcels
        self.clock = created
        self.origin, self.dest = route.row["origin_warehouse_id"], route.row["dest_warehouse_id"]
        self.lost: set[int] = set()  # parcels scanned no more after loading

    def scan(self, warehouse_id: int, scan_type: str, note: str | None = None) -> None:
        """Every parcel scanned at ``warehouse_id`` now (a few seconds apart); the scanner retries now and
        then (a duplicate row, half of them removed by a later dedup job); a lost parcel is scanned no more."""
        rng = self.rng
        for offset, parcel in enumerate(self.parcels):
            when = self.clock + offset * rng.uniform(2, 40)
            if when >= HORIZON or parcel.row["parcel_id"] in self.lost:
                continue
            row = dict(parcel_id=parcel.row["parcel_id"], warehouse_id=warehouse_id, scan_type=scan_type,
                       scanned_at=at(when), scan_date=day(when),
                       device_id=maybe(rng, 0.02, f"HH-{warehouse_id:02d}-{rng.randint(1, 3)}"), note=note)
            scan = self.stream.add("scans", when, **row)
            night = at(when).hour >= 20 or at(when).hour < 6
            if warehouse_id == PURGED_HUB and night and PURGE_FROM <= when < PURGE_TO:
                scan.delete(75 * DAY).restore(110 * DAY)
            if rng.random() < 0.04:
                copy = self.stream.add("scans", when + 1, **row)
                if rng.random() < 0.5:
                    copy.delete(when + rng.uniform(1, 10) * DAY)

    def advance(self, low_hours: float, high_hours: float) -> bool:
        """Move the clock on; False once past the horizon (the journey goes on after the stream ends)."""
        self.clock += self.rng.uniform(low_hours, high_hours) * HOUR
        return self.clock < HORIZON

    def travel(self) -> None:
        rng = self.rng
        if not self.advance(1, 30):
            return
        self.shipment.set(self.clock, status="in_transit", ship_date=day(self.clock))
        if rng.random() < 0.02:
            return  # picked up, never scanned: the driver's scanner was broken
        for step, hours in (("received", (0, 0)), ("sorted", (0.3, 3)), ("loaded", (1, 8))):
            if not self.advance(*hours):
                return
            self.scan(self.origin, step)
        self.lost = {p.row["parcel_id"] for p in self.parcels if rng.random() < 0.01}
        planned = self.route.row["planned_hours"] or 24.0
        if not self.advance(planned * 0.7, planned * 2.2):
            return
        if rng.random() < 0.06 and not self.exception():
            return
        if self.route.row["carrier_id"] == PARTNER_CARRIER:
            if self.advance(10, 40):
                self.shipment.set(self.clock, status="delivered", delivered_at=at(self.clock))
            return
        for step, hours in (("received", (0, 0)), ("out_for_delivery", (2, 20)), ("delivered", (1, 8))):
            if not self.advance(*hours):
                return
            self.scan(self.dest, step)
        self.shipment.set(self.clock, status="delivered", delivered_at=at(self.clock))

    def exception(self) -> bool:
        """An exception scan at the destination; True when the journey then goes on as planned."""
        rng = self.rng
        self.scan(self.dest, "exception", rng.choice(NOTES))
        self.shipment.set(self.clock + 60, status="exception")
        outcome = pick(rng, {"resolved": 5, "returned": 3, "stuck": 2})
        if outcome == "stuck" or not self.advance(24, 96):
            return False
        if outcome == "resolved":
            return True
        self.scan(self.origin, "received", "return to sender")
        self.shipment.set(self.clock + 60, status="returned")
        return False
