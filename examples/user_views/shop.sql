-- An online shop: customers in regions, a category tree, products, orders with their lines,
-- payments, shipments and reviews. Keys as the shop's database declares them.
CREATE TABLE regions (
    region_id   INT,
    name        STRING,
    country     STRING,
    PRIMARY KEY (region_id)
);

CREATE TABLE customers (
    customer_id BIGINT,
    email       STRING,
    first_name  STRING,
    last_name   STRING,
    region_id   INT REFERENCES regions (region_id),
    signup_date DATE,
    created_at  TIMESTAMP,
    is_vip      BOOLEAN,
    PRIMARY KEY (customer_id)
);

CREATE TABLE categories (
    category_id INT,
    name        STRING,
    parent_id   INT REFERENCES categories (category_id),
    PRIMARY KEY (category_id)
);

CREATE TABLE products (
    product_id  BIGINT,
    sku         STRING,
    name        STRING,
    category_id INT REFERENCES categories (category_id),
    brand       STRING,
    list_price  DECIMAL(10,2),
    cost        DECIMAL(10,2),
    weight_kg   DOUBLE,
    is_active   BOOLEAN,
    created_at  TIMESTAMP,
    PRIMARY KEY (product_id)
);

CREATE TABLE orders (
    order_id     BIGINT,
    customer_id  BIGINT REFERENCES customers (customer_id),
    order_date   DATE,
    created_at   TIMESTAMP,
    status       STRING,
    channel      STRING,
    coupon_code  STRING,
    shipping_fee DECIMAL(8,2),
    PRIMARY KEY (order_id)
);

CREATE TABLE order_items (
    order_id   BIGINT REFERENCES orders (order_id),
    line_no    INT,
    product_id BIGINT REFERENCES products (product_id),
    quantity   INT,
    unit_price DECIMAL(10,2),
    discount   DECIMAL(10,2),
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE payments (
    payment_id BIGINT,
    order_id   BIGINT REFERENCES orders (order_id),
    method     STRING,
    amount     DECIMAL(12,2),
    status     STRING,
    paid_at    TIMESTAMP,
    PRIMARY KEY (payment_id)
);

CREATE TABLE shipments (
    shipment_id    BIGINT,
    order_id       BIGINT REFERENCES orders (order_id),
    carrier        STRING,
    shipped_date   DATE,
    delivered_date DATE,
    tracking_code  STRING,
    PRIMARY KEY (shipment_id)
);

CREATE TABLE reviews (
    review_id   BIGINT,
    product_id  BIGINT REFERENCES products (product_id),
    customer_id BIGINT REFERENCES customers (customer_id),
    rating      INT,
    title       STRING,
    created_at  TIMESTAMP,
    PRIMARY KEY (review_id)
);
