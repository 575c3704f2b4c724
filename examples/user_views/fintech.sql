-- A card-issuing fintech: customers hold accounts in several currencies, accounts carry cards,
-- card and transfer transactions at merchants, daily FX rates, and disputes. Keys as the core
-- banking database declares them.
CREATE TABLE customers (
    customer_id BIGINT,
    full_name   STRING,
    email       STRING,
    country     STRING,
    segment     STRING,
    kyc_status  STRING,
    birth_date  DATE,
    created_at  TIMESTAMP,
    is_pep      BOOLEAN,
    PRIMARY KEY (customer_id)
);

CREATE TABLE accounts (
    account_id   BIGINT,
    customer_id  BIGINT REFERENCES customers (customer_id),
    account_type STRING,
    currency     STRING,
    status       STRING,
    opened_on    DATE,
    closed_on    DATE,
    credit_limit DECIMAL(12,2),
    PRIMARY KEY (account_id)
);

CREATE TABLE cards (
    card_id    BIGINT,
    account_id BIGINT REFERENCES accounts (account_id),
    card_type  STRING,
    network    STRING,
    last4      STRING,
    issued_at  TIMESTAMP,
    expires_on DATE,
    is_blocked BOOLEAN,
    PRIMARY KEY (card_id)
);

CREATE TABLE merchants (
    merchant_id  INT,
    name         STRING,
    mcc          STRING,
    category     STRING,
    country      STRING,
    city         STRING,
    is_high_risk BOOLEAN,
    PRIMARY KEY (merchant_id)
);

CREATE TABLE transactions (
    txn_id      BIGINT,
    account_id  BIGINT REFERENCES accounts (account_id),
    card_id     BIGINT REFERENCES cards (card_id),
    merchant_id INT REFERENCES merchants (merchant_id),
    txn_type    STRING,
    channel     STRING,
    amount      DECIMAL(14,2),
    currency    STRING,
    status      STRING,
    created_at  TIMESTAMP,
    posted_date DATE,
    description STRING,
    PRIMARY KEY (txn_id)
);

-- one rate per currency and business day (EUR is the book currency, it has no row)
CREATE TABLE fx_rates (
    currency    STRING,
    rate_date   DATE,
    rate_to_eur DECIMAL(12,6),
    PRIMARY KEY (currency, rate_date)
);

CREATE TABLE disputes (
    dispute_id  BIGINT,
    txn_id      BIGINT REFERENCES transactions (txn_id),
    reason      STRING,
    status      STRING,
    opened_at   TIMESTAMP,
    resolved_on DATE,
    refunded    DECIMAL(14,2),
    PRIMARY KEY (dispute_id)
);
