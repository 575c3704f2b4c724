-- Finance table: gross margin per brand (unbranded products grouped together).
SELECT coalesce(p.brand, '(no brand)') AS brand,
       SUM(oi.quantity * (oi.unit_price - p.cost)) AS gross_margin,
       SUM(oi.quantity * oi.unit_price) AS revenue
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
GROUP BY coalesce(p.brand, '(no brand)')
