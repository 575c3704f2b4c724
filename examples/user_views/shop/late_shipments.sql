-- Ops list: orders shipped more than two days after they were placed.
SELECT o.order_id, o.order_date, s.shipped_date, s.carrier
FROM orders o
JOIN shipments s ON s.order_id = o.order_id
WHERE datediff(s.shipped_date, o.order_date) > 2
