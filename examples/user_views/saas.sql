-- A SaaS product: customer accounts on plans with subscriptions, their users, sessions and the
-- clickstream of events (an append-mostly log without a key), feature flags, invoices and tickets.
CREATE TABLE plans (
    plan_id        INT,
    name           STRING,
    tier           STRING,
    monthly_price  DECIMAL(8,2),
    seats_included INT,
    PRIMARY KEY (plan_id)
);

CREATE TABLE accounts (
    account_id  BIGINT,
    name        STRING,
    domain      STRING,
    industry    STRING,
    country     STRING,
    created_at  TIMESTAMP,
    is_internal BOOLEAN,
    PRIMARY KEY (account_id)
);

CREATE TABLE subscriptions (
    subscription_id BIGINT,
    account_id      BIGINT REFERENCES accounts (account_id),
    plan_id         INT REFERENCES plans (plan_id),
    status          STRING,
    started_on      DATE,
    ended_on        DATE,
    seats           INT,
    mrr             DECIMAL(10,2),
    PRIMARY KEY (subscription_id)
);

CREATE TABLE users (
    user_id        BIGINT,
    account_id     BIGINT REFERENCES accounts (account_id),
    email          STRING,
    role           STRING,
    signup_at      TIMESTAMP,
    signup_date    DATE,
    last_seen_date DATE,
    is_active      BOOLEAN,
    PRIMARY KEY (user_id)
);

CREATE TABLE sessions (
    session_id       STRING,
    user_id          BIGINT REFERENCES users (user_id),
    started_at       TIMESTAMP,
    session_date     DATE,
    duration_seconds INT,
    device           STRING,
    country          STRING,
    PRIMARY KEY (session_id)
);

-- the clickstream: no key, a row may repeat (the tracker retries)
CREATE TABLE events (
    user_id    BIGINT REFERENCES users (user_id),
    session_id STRING REFERENCES sessions (session_id),
    event_name STRING,
    event_time TIMESTAMP,
    event_date DATE,
    page_url   STRING,
    revenue    DOUBLE
);

CREATE TABLE feature_flags (
    flag_id    INT,
    account_id BIGINT REFERENCES accounts (account_id),
    flag_name  STRING,
    enabled    BOOLEAN,
    updated_at TIMESTAMP,
    PRIMARY KEY (flag_id)
);

CREATE TABLE invoices (
    invoice_id      BIGINT,
    account_id      BIGINT REFERENCES accounts (account_id),
    subscription_id BIGINT REFERENCES subscriptions (subscription_id),
    issued_on       DATE,
    due_on          DATE,
    paid_on         DATE,
    amount          DECIMAL(12,2),
    tax             DECIMAL(12,2),
    status          STRING,
    PRIMARY KEY (invoice_id)
);

CREATE TABLE support_tickets (
    ticket_id  BIGINT,
    account_id BIGINT REFERENCES accounts (account_id),
    user_id    BIGINT REFERENCES users (user_id),
    priority   STRING,
    opened_at  TIMESTAMP,
    closed_at  TIMESTAMP,
    csat       INT,
    PRIMARY KEY (ticket_id)
);
