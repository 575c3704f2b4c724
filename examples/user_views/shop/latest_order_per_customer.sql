-- Customer list: each customer's most recent order.
SELECT customer_id, order_id, created_at, status
FROM (
    SELECT o.*, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY created_at DESC, order_id DESC) AS rn
    FROM orders o
) t
WHERE rn = 1
