-- Funnel: orders placed, paid, shipped, delivered.
SELECT COUNT(DISTINCT order_id) AS placed,
       COUNT(DISTINCT CASE WHEN status IN ('paid', 'shipped', 'delivered') THEN order_id END) AS paid,
       COUNT(DISTINCT CASE WHEN status IN ('shipped', 'delivered') THEN order_id END) AS shipped,
       COUNT(DISTINCT CASE WHEN status = 'delivered' THEN order_id END) AS delivered
FROM orders
