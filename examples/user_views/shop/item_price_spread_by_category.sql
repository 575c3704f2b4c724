-- Stats tile: spread of item prices per category (standard deviation and range).
SELECT p.category_id,
       stddev(CAST(oi.unit_price AS DOUBLE)) AS price_stddev,
       MIN(oi.unit_price) AS min_price,
       MAX(oi.unit_price) AS max_price
FROM order_items oi
JOIN products p ON p.product_id = oi.product_id
GROUP BY p.category_id
