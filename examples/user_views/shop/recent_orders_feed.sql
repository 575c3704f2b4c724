-- Activity feed: the 20 latest orders with customer e-mail.
SELECT o.order_id, o.created_at, c.email, o.status
FROM orders o
JOIN customers c ON c.customer_id = o.customer_id
ORDER BY o.created_at DESC, o.order_id DESC
LIMIT 20
