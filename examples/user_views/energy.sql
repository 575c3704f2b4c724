-- A smart-metering energy retailer: customer sites on tariffs, meters at each site (grid import,
-- solar export, EV chargers) sending interval readings, alarms raised by the meters, field
-- visits, and monthly bills. Keys as the metering platform's database declares them.
CREATE TABLE tariffs (
    tariff_id       INT,
    name            STRING,
    price_per_kwh   DECIMAL(8,4),
    standing_charge DECIMAL(8,2),
    peak_start_hour INT,
    peak_end_hour   INT,
    is_green        BOOLEAN,
    PRIMARY KEY (tariff_id)
);

CREATE TABLE sites (
    site_id         INT,
    tariff_id       INT REFERENCES tariffs (tariff_id),
    site_name       STRING,
    region          STRING,
    site_type       STRING,
    postcode        STRING,
    commissioned_on DATE,
    floor_area_m2   DOUBLE,
    PRIMARY KEY (site_id)
);

CREATE TABLE meters (
    meter_id     BIGINT,
    site_id      INT REFERENCES sites (site_id),
    serial_no    STRING,
    meter_type   STRING,
    firmware     STRING,
    installed_at TIMESTAMP,
    is_active    BOOLEAN,
    PRIMARY KEY (meter_id)
);

-- one reading per meter and interval end; kwh is the energy of the interval
CREATE TABLE readings (
    meter_id BIGINT REFERENCES meters (meter_id),
    read_at  TIMESTAMP,
    kwh      DOUBLE,
    voltage  DOUBLE,
    quality  STRING,
    PRIMARY KEY (meter_id, read_at)
);

CREATE TABLE alarms (
    alarm_id   BIGINT,
    meter_id   BIGINT REFERENCES meters (meter_id),
    alarm_type STRING,
    severity   INT,
    raised_at  TIMESTAMP,
    cleared_at TIMESTAMP,
    details    STRING,
    PRIMARY KEY (alarm_id)
);

CREATE TABLE technicians (
    technician_id INT,
    full_name     STRING,
    region        STRING,
    hourly_rate   DECIMAL(8,2),
    is_contractor BOOLEAN,
    PRIMARY KEY (technician_id)
);

CREATE TABLE visits (
    visit_id      BIGINT,
    meter_id      BIGINT REFERENCES meters (meter_id),
    technician_id INT REFERENCES technicians (technician_id),
    alarm_id      BIGINT REFERENCES alarms (alarm_id),
    visit_date    DATE,
    hours_on_site DECIMAL(5,2),
    outcome       STRING,
    parts_cost    DECIMAL(10,2),
    PRIMARY KEY (visit_id)
);

CREATE TABLE bills (
    bill_id      BIGINT,
    site_id      INT REFERENCES sites (site_id),
    period_start DATE,
    period_end   DATE,
    kwh_billed   DECIMAL(12,3),
    amount       DECIMAL(12,2),
    status       STRING,
    issued_at    TIMESTAMP,
    paid_on      DATE,
    PRIMARY KEY (bill_id)
);
