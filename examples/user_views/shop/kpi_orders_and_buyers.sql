-- Header KPI: number of non-cancelled orders and distinct buyers.
SELECT COUNT(*) AS orders,
       COUNT(DISTINCT customer_id) AS buyers
FROM orders
WHERE status <> 'cancelled'
