-- A ride-hailing app: riders request trips in cities, drivers with their vehicles accept them, the
-- trip is paid (card, wallet, cash) and rated both ways; promo codes discount fares. Keys as the
-- dispatch service's database declares them.
CREATE TABLE cities (
    city_id     INT,
    name        STRING,
    country     STRING,
    time_zone   STRING,
    launched_on DATE,
    base_fare   DECIMAL(6,2),
    PRIMARY KEY (city_id)
);

CREATE TABLE riders (
    rider_id      BIGINT,
    city_id       INT REFERENCES cities (city_id),
    full_name     STRING,
    email         STRING,
    phone         STRING,
    signup_at     TIMESTAMP,
    referred_by   BIGINT,
    is_premium    BOOLEAN,
    birth_year    INT,
    PRIMARY KEY (rider_id)
);

CREATE TABLE vehicles (
    vehicle_id    BIGINT,
    plate         STRING,
    make          STRING,
    model         STRING,
    model_year    INT,
    vehicle_class STRING,
    seats         INT,
    is_electric   BOOLEAN,
    PRIMARY KEY (vehicle_id)
);

CREATE TABLE drivers (
    driver_id    BIGINT,
    city_id      INT REFERENCES cities (city_id),
    vehicle_id   BIGINT REFERENCES vehicles (vehicle_id),
    full_name    STRING,
    onboarded_on DATE,
    status       STRING,
    rating       DOUBLE,
    PRIMARY KEY (driver_id)
);

CREATE TABLE promotions (
    promo_code   STRING,
    city_id      INT REFERENCES cities (city_id),
    discount_pct INT,
    max_discount DECIMAL(6,2),
    valid_from   DATE,
    valid_to     DATE,
    PRIMARY KEY (promo_code)
);

CREATE TABLE trips (
    trip_id          BIGINT,
    rider_id         BIGINT REFERENCES riders (rider_id),
    driver_id        BIGINT REFERENCES drivers (driver_id),
    city_id          INT REFERENCES cities (city_id),
    product          STRING,
    status           STRING,
    requested_at     TIMESTAMP,
    pickup_at        TIMESTAMP,
    dropoff_at       TIMESTAMP,
    distance_km      DOUBLE,
    fare             DECIMAL(10,2),
    surge_multiplier DECIMAL(4,2),
    promo_code       STRING REFERENCES promotions (promo_code),
    cancel_reason    STRING,
    PRIMARY KEY (trip_id)
);

CREATE TABLE payments (
    payment_id BIGINT,
    trip_id    BIGINT REFERENCES trips (trip_id),
    method     STRING,
    amount     DECIMAL(10,2),
    tip        DECIMAL(8,2),
    status     STRING,
    paid_at    TIMESTAMP,
    PRIMARY KEY (payment_id)
);

-- one row per rated trip: the rider's stars for the driver, the driver's stars for the rider
CREATE TABLE ratings (
    trip_id      BIGINT REFERENCES trips (trip_id),
    driver_stars INT,
    rider_stars  INT,
    comment      STRING,
    rated_at     TIMESTAMP,
    PRIMARY KEY (trip_id)
);
