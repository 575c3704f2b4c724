-- Table: revenue per SKU family (the SKU's prefix before the first dash).
SELECT regexp_extract(p.sku, '^([A-Z]+)-', 1) AS sku_family,
       SUM(oi.quantity * oi.unit_price) AS revenue
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
GROUP BY regexp_extract(p.sku, '^([A-Z]+)-', 1)
