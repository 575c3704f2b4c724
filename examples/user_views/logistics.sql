-- A parcel network: warehouses (hubs and depots), carriers, the routes (lanes) between warehouses,
-- shipments on a route, their parcels and the scan log of every parcel (an append-mostly log
-- without a key: handheld scanners retry).
CREATE TABLE warehouses (
    warehouse_id INT,
    code         STRING,
    city         STRING,
    country      STRING,
    kind         STRING,
    capacity     INT,
    opened_on    DATE,
    PRIMARY KEY (warehouse_id)
);

CREATE TABLE carriers (
    carrier_id    INT,
    name          STRING,
    service_level STRING,
    cost_per_kg   DECIMAL(8,3),
    is_active     BOOLEAN,
    PRIMARY KEY (carrier_id)
);

CREATE TABLE routes (
    route_id            INT,
    origin_warehouse_id INT REFERENCES warehouses (warehouse_id),
    dest_warehouse_id   INT REFERENCES warehouses (warehouse_id),
    carrier_id          INT REFERENCES carriers (carrier_id),
    distance_km         INT,
    planned_hours       DOUBLE,
    PRIMARY KEY (route_id)
);

CREATE TABLE shipments (
    shipment_id    BIGINT,
    route_id       INT REFERENCES routes (route_id),
    customer_ref   STRING,
    priority       STRING,
    status         STRING,
    created_at     TIMESTAMP,
    ship_date      DATE,
    promised_date  DATE,
    delivered_at   TIMESTAMP,
    declared_value DECIMAL(12,2),
    PRIMARY KEY (shipment_id)
);

CREATE TABLE parcels (
    parcel_id   BIGINT,
    shipment_id BIGINT REFERENCES shipments (shipment_id),
    barcode     STRING,
    weight_kg   DOUBLE,
    length_cm   INT,
    width_cm    INT,
    height_cm   INT,
    is_fragile  BOOLEAN,
    PRIMARY KEY (parcel_id)
);

-- the scan log: no key, a row may repeat (the scanner retries)
CREATE TABLE scans (
    parcel_id    BIGINT REFERENCES parcels (parcel_id),
    warehouse_id INT REFERENCES warehouses (warehouse_id),
    scan_type    STRING,
    scanned_at   TIMESTAMP,
    scan_date    DATE,
    device_id    STRING,
    note         STRING
);
