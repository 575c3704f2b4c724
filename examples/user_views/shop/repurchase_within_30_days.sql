-- Retention tile: customers who ordered again within 30 days of an order.
SELECT COUNT(DISTINCT o1.customer_id) AS repurchasers
FROM orders o1
JOIN orders o2
  ON o2.customer_id = o1.customer_id
 AND o2.order_date BETWEEN o1.order_date + 1 AND o1.order_date + 30
