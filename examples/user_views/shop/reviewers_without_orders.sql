-- Fraud tile: customers who reviewed products but never placed an order.
SELECT customer_id FROM reviews
EXCEPT
SELECT customer_id FROM orders
