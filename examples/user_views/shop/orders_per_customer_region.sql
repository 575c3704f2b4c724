-- Table: orders per region, regions without orders shown with 0.
SELECT r.region_id, r.name,
       COUNT(o.order_id) AS orders
FROM regions r
LEFT JOIN customers c ON c.region_id = r.region_id
LEFT JOIN orders o ON o.customer_id = c.customer_id
GROUP BY r.region_id, r.name
