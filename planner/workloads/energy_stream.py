"""The change stream of the user-view suite's smart-metering energy retailer
(``examples/user_views/energy.sql``) over half a year: tariffs, customer sites, their meters (grid
import, rooftop solar, EV chargers), twelve-hourly interval readings, the meters' alarms, field
technicians' visits and monthly bills.

What a metering platform's change log carries and what breaks maintenance: estimated readings
replaced by actual ones (a delete and an insert of the same key with another ``kwh``), readings
missing while a meter is offline, a meter that reports before it is registered (a dangling
``meter_id``), a site decommissioned while its meter keeps sending, a region's readings of two weeks
withdrawn by a faulty import and reloaded (groups emptied and refilled), firmware upgrades and
tariff switches, a tariff's price rise, alarms raised and cleared, false alarms deleted, bills
issued, paid, or cancelled and reissued under a new ``bill_id``, NULLs (kwh, voltage, floor area,
cleared time, outcome, parts cost) and codes as installers type them (any case, padded).
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from planner.workloads.entity_stream import (
    DAYS,
    FIRST,
    HORIZON,
    LAST,
    START,
    Entity,
    Stream,
    at,
    maybe,
    money,
    pick,
)
from planner.workloads.user_views import schema_ddl, table_shapes

DAY = 86_400.0
HOUR = 3600.0

#: name, price per kWh, standing charge per day, peak hours, green
TARIFFS = [("Standard Variable", "0.2850", "0.45", 16, 20, False), ("Fixed 12M", "0.2690", "0.50", 16, 20, False),
           ("Green Flex", "0.3010", "0.40", 17, 21, True), ("EV Night", "0.2450", "0.55", 7, 23, True),
           ("Business Pro", "0.2390", "1.20", 8, 18, False)]
REGIONS = ["North", "South", "East", "West", "Central"]
TYPES = {"residential": 6, "commercial": 3, "industrial": 1}
ALARMS = {"comms_loss": 5, "voltage_sag": 3, "tamper": 1, "reverse_flow": 1, "Overcurrent": 1}
OUTCOMES = {"fixed": 5, "meter_replaced": 2, "no_fault_found": 2, None: 1}
RELOADED_REGION, WITHDRAWN, RELOADED = "East", (50 * DAY, 64 * DAY), 90 * DAY  # a faulty import and its reload
DECOMMISSIONED_SITE, DECOMMISSIONED = 7, 120 * DAY
EARLY_METER = 999  # sends readings from day 20, registered on day 45
UNREGISTERED_METER = 998  # sends readings from day 150, never registered


def energy_stream(seed: int = 29) -> Stream:
    rng = random.Random(seed)
    stream = Stream(table_shapes(schema_ddl("energy")))
    tariffs = [_tariff(stream, number, *spec) for number, spec in enumerate(TARIFFS, 1)]
    technicians = [_technician(rng, stream, number) for number in range(1, 9)]
    grid = _Grid(rng, stream, technicians)
    for site_id in range(1, 23):
        site = _site(rng, stream, site_id, tariffs)
        for meter in grid.meters(site):
            grid.readings(meter, site)
        _bills(rng, stream, grid, site)
    grid.early_meter()
    grid.routine_visits()
    return stream


def _tariff(stream: Stream, number: int, name: str, price: str, standing: str, peak_from: int, peak_to: int,
            green: bool) -> Entity:
    tariff = stream.add("tariffs", 0.0, tariff_id=number, name=name, price_per_kwh=Decimal(price),
                        standing_charge=Decimal(standing), peak_start_hour=peak_from, peak_end_hour=peak_to,
                        is_green=green)
    if number == 1:
        tariff.set(91 * DAY, price_per_kwh=Decimal("0.2990"))  # the April price rise
    return tariff


def _technician(rng: random.Random, stream: Stream, number: int) -> Entity:
    return stream.add("technicians", rng.uniform(0, HOUR), technician_id=number,
                      full_name=f"{rng.choice(FIRST)} {rng.choice(LAST)}", region=REGIONS[number % len(REGIONS)],
                      hourly_rate=money(rng.uniform(38, 95)), is_contractor=maybe(rng, 0.1, number > 5))


def _site(rng: random.Random, stream: Stream, site_id: int, tariffs: list[Entity]) -> Entity:
    """A site on a tariff (businesses on Business Pro); some commissioned during the half year, a few
    switching tariff, one decommissioned while its meter keeps sending."""
    site_type = pick(rng, TYPES)
    tariff = tariffs[4] if site_type == "industrial" else rng.choice(tariffs[:4] if site_type == "residential" else tariffs)
    born = rng.uniform(0, HOUR) if rng.random() < 0.8 else rng.uniform(10, 120) * DAY
    region = REGIONS[site_id % len(REGIONS)]
    postcode = f"{region[0]}{rng.randint(1, 99)} {rng.randint(1, 9)}{rng.choice('ABDEFG')}{rng.choice('HJLNPQ')}"
    site = stream.add(
        "sites", born, site_id=site_id, tariff_id=tariff.row["tariff_id"],
        site_name=f"{rng.choice(['Oak', 'Mill', 'River', 'Hill', 'Park'])} {rng.choice(['House', 'Works', 'Court', 'Depot'])} {site_id}",
        region=region if rng.random() > 0.08 else rng.choice([region.lower(), f" {region}", region.upper()]),
        site_type=site_type, postcode=postcode if rng.random() > 0.1 else postcode.lower().replace(" ", ""),
        commissioned_on=at(born).date() - dt.timedelta(days=rng.randint(30, 2000) if born < HOUR else 0),
        floor_area_m2=maybe(rng, 0.1, round(rng.uniform(60, 250) if site_type == "residential"
                                            else rng.uniform(300, 8000), 1)))
    if rng.random() < 0.12:
        site.set(born + rng.uniform(20, 150) * DAY, tariff_id=rng.choice(tariffs[:4]).row["tariff_id"])
    if site_id == DECOMMISSIONED_SITE:
        site.delete(DECOMMISSIONED)
    return site


class _Grid:
    """The meters and what they send: readings, alarms and the visits alarms cause, numbered."""

    def __init__(self, rng: random.Random, stream: Stream, technicians: list[Entity]):
        self.rng, self.stream, self.technicians = rng, stream, technicians
        self.meter_id = self.alarm_id = self.visit_id = self.bill_id = 0
        self.all_meters: list[Entity] = []

    def meters(self, site: Entity) -> list[Entity]:
        """The site's import meter, maybe a solar meter and an EV charger; a firmware upgrade rolled
        out from day 60; a few deactivated. Returns the meters that send readings (a few solar meters and
        chargers are installed but never commissioned)."""
        rng = self.rng
        kinds = ["consumption"]
        if rng.random() < 0.35:
            kinds.append("solar")
        if rng.random() < 0.25:
            kinds.append("ev_charger")
        meters = []
        born = site.events[0][0]
        for kind in kinds:
            silent = kind != "consumption" and rng.random() < 0.15  # installed, never commissioned
            self.meter_id += 1
            installed = born + rng.uniform(0, 2 * DAY) if born > HOUR else born - rng.uniform(20, 900) * DAY
            meter = self.stream.add(
                "meters", max(born, 0.0) + rng.uniform(1, 600), meter_id=self.meter_id, site_id=site.row["site_id"],
                serial_no=f"SM{self.meter_id:06d}{'-' + kind[:2].upper() if kind != 'consumption' else ''}",
                meter_type=kind if rng.random() > 0.05 else kind.upper(), firmware=maybe(rng, 0.05, "v2.3.1"),
                installed_at=at(installed), is_active=True)
            if rng.random() < 0.6:
                meter.set(rng.uniform(60, 150) * DAY, firmware="v2.4.0")
            if rng.random() < 0.04:
                meter.set(rng.uniform(100, 170) * DAY, is_active=False)
            if not silent:
                meters.append(meter)
        self.all_meters += meters
        return meters

    def readings(self, meter: Entity, site: Entity, start: float | None = None) -> None:
        """A reading at 07:00 and 19:00 UTC (the interval's end) from installation on; gaps while the
        meter is offline; estimated readings replaced by actual ones days later; the reloaded region."""
        rng = self.rng
        kind = meter.row["meter_type"].lower()
        scale = {"residential": 1.0, "commercial": 6.0, "industrial": 25.0}[site.row["site_type"]]
        first = start if start is not None else meter.events[0][0]
        offline_from = rng.uniform(0, HORIZON) if rng.random() < 0.2 else HORIZON
        offline_to = offline_from + rng.uniform(1, 8) * DAY
        reloaded = site.row["region"].strip().title() == RELOADED_REGION
        for half_day in range(int(first // (DAY / 2)) + 1, 2 * DAYS):
            when = half_day * DAY / 2 + 7 * HOUR
            if when >= HORIZON or offline_from <= when < offline_to:
                continue
            day_time = half_day % 2 == 1  # the interval 07:00–19:00
            if kind == "solar":
                kwh = rng.uniform(0.5, 14) * (1 + half_day / (2 * DAYS)) if day_time else 0.0
            elif kind == "ev_charger":
                kwh = rng.choice([0.0, 0.0, rng.uniform(5, 40)])
            else:
                kwh = rng.uniform(2, 9) * scale * (1.4 if day_time else 0.8)
            estimated = rng.random() < 0.04
            reading = self.stream.add(
                "readings", when + rng.uniform(60, 1800), meter_id=meter.row["meter_id"], read_at=at(when),
                kwh=maybe(rng, 0.01, round(kwh, 3)), voltage=maybe(rng, 0.05, round(rng.gauss(230, 4), 1)),
                quality="estimated" if estimated else rng.choice(["actual"] * 20 + ["ACTUAL"]))
            if estimated and rng.random() < 0.8:
                reading.set(when + rng.uniform(1, 6) * DAY, kwh=round(kwh * rng.uniform(0.9, 1.1), 3), quality="actual")
            if reloaded and WITHDRAWN[0] <= when < WITHDRAWN[1]:
                reading.delete(WITHDRAWN[1] + DAY).restore(RELOADED)
            if rng.random() < 0.01:
                self.alarm(meter, when, "voltage_sag" if reading.row["voltage"] else "comms_loss")
        if offline_from < HORIZON:
            self.alarm(meter, offline_from + HOUR, "comms_loss")
        for _ in range(rng.choice([0, 0, 1, 2])):
            self.alarm(meter, rng.uniform(first, HORIZON), pick(rng, ALARMS))

    def alarm(self, meter: Entity, when: float, alarm_type: str) -> None:
        """An alarm, cleared hours or days later (or not yet); false alarms deleted; serious ones visited."""
        rng = self.rng
        if when >= HORIZON or when < 0:
            return
        self.alarm_id += 1
        severity = {"tamper": 3, "Overcurrent": 3, "reverse_flow": 2}.get(alarm_type, rng.choice([1, 1, 2]))
        alarm = self.stream.add(
            "alarms", when, alarm_id=self.alarm_id, meter_id=meter.row["meter_id"], alarm_type=alarm_type,
            severity=maybe(rng, 0.03, severity), raised_at=at(when), cleared_at=None,
            details=maybe(rng, 0.5, rng.choice(["auto-detected", "Customer reported", "AUTO-DETECTED", "grid event "])))
        cleared = when + rng.uniform(0.1, 200) * HOUR
        if rng.random() < 0.05:
            alarm.delete(when + rng.uniform(1, 24) * HOUR)  # a false alarm
            return
        if cleared < HORIZON and rng.random() < 0.85:
            alarm.set(cleared, cleared_at=at(cleared))
        if (severity or 0) >= 2 and rng.random() < 0.85 or rng.random() < 0.2:
            self.visit(meter, when + rng.uniform(0.5, 10) * DAY, alarm)

    def visit(self, meter: Entity, when: float, alarm: Entity | None) -> None:
        rng = self.rng
        if when >= HORIZON:
            return
        self.visit_id += 1
        technician = rng.choice(self.technicians)
        visit = self.stream.add(
            "visits", when, visit_id=self.visit_id, meter_id=meter.row["meter_id"],
            technician_id=technician.row["technician_id"], alarm_id=alarm.row["alarm_id"] if alarm else None,
            visit_date=at(when).date(), hours_on_site=Decimal(f"{rng.choice([0.5, 1, 1.5, 2, 3, 4.25]):.2f}"),
            outcome="scheduled", parts_cost=None)
        if when + DAY < HORIZON:
            outcome = pick(rng, OUTCOMES)
            visit.set(when + rng.uniform(2, 20) * HOUR, outcome=outcome,
                      parts_cost=money(rng.uniform(40, 400)) if outcome == "meter_replaced" else maybe(rng, 0.6, Decimal("0.00")))

    def early_meter(self) -> None:
        """A charger that reports from day 20, registered on day 45 (its readings dangle till then), and
        a meter swapped in by a contractor on day 150 that the register never learns of."""
        self.stream.add("meters", 45 * DAY, meter_id=EARLY_METER, site_id=3, serial_no="SM999999-EV",
                                meter_type="ev_charger", firmware=None, installed_at=at(19 * DAY), is_active=True)
        for day_no in range(20, DAYS):
            if self.rng.random() < 0.5:
                when = day_no * DAY + 19 * HOUR
                self.stream.add("readings", when + 120, meter_id=EARLY_METER, read_at=at(when),
                                kwh=round(self.rng.uniform(3, 30), 3), voltage=None, quality="actual")
        for day_no in range(150, DAYS):
            when = day_no * DAY + 7 * HOUR
            self.stream.add("readings", when + 300, meter_id=UNREGISTERED_METER, read_at=at(when),
                            kwh=round(self.rng.uniform(10, 60), 3), voltage=maybe(self.rng, 0.5, 229.5),
                            quality="actual")

    def routine_visits(self) -> None:
        """Routine inspections without an alarm."""
        for _ in range(25):
            self.visit(self.rng.choice(self.all_meters), self.rng.uniform(0, HORIZON), None)


def _bills(rng: random.Random, stream: Stream, grid: _Grid, site: Entity) -> None:
    """A bill per calendar month the site was live, issued on the 3rd of the next month; most paid
    within weeks, some overdue, a few cancelled and reissued under a new id."""
    born = site.events[0][0]
    for month in range(1, 7):
        start, end = dt.date(2024, month, 1), dt.date(2024, month + 1, 1) - dt.timedelta(days=1)
        issued = (dt.datetime(2024, month + 1, 3, 6, tzinfo=dt.UTC) - START).total_seconds()
        if issued >= HORIZON or issued < born:
            continue
        grid.bill_id += 1
        kwh = Decimal(f"{rng.uniform(250, 900) * (1 if site.row['site_type'] == 'residential' else 12):.3f}")
        amount = money(float(kwh) * 0.28 + 14)
        bill = stream.add("bills", issued, bill_id=grid.bill_id, site_id=site.row["site_id"], period_start=start,
                          period_end=end, kwh_billed=kwh, amount=amount, status="issued", issued_at=at(issued),
                          paid_on=None)
        if rng.random() < 0.05:
            bill.set(issued + 2 * DAY, status="cancelled")
            grid.bill_id += 1
            bill = stream.add("bills", issued + 2 * DAY, bill_id=grid.bill_id, site_id=site.row["site_id"],
                              period_start=start, period_end=end, kwh_billed=kwh, amount=money(float(amount) * 0.9),
                              status="issued", issued_at=at(issued + 2 * DAY), paid_on=None)
        paid = issued + rng.uniform(2, 40) * DAY
        if paid < HORIZON and rng.random() < 0.85:
            bill.set(paid, status="paid", paid_on=at(paid).date())
        elif issued + 30 * DAY < HORIZON:
            bill.set(issued + 30 * DAY, status="overdue")
