-- CRM list: customers who placed at least one order above 200.
SELECT c.customer_id, c.email
FROM customers c
WHERE c.customer_id IN (
    SELECT o.customer_id
    FROM orders o
    JOIN order_items oi ON oi.order_id = o.order_id
    GROUP BY o.order_id, o.customer_id
    HAVING SUM(oi.quantity * oi.unit_price) > 200
)
