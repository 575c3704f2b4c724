-- Growth chart: first-time buyers per day.
SELECT first_order_date, COUNT(*) AS new_buyers
FROM (SELECT customer_id, MIN(order_date) AS first_order_date FROM orders GROUP BY customer_id) f
GROUP BY first_order_date
ORDER BY first_order_date
