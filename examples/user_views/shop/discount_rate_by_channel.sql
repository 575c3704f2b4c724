-- Finance tile: discount as a fraction of list revenue, per sales channel.
SELECT o.channel,
       SUM(oi.discount) / NULLIF(SUM(oi.quantity * oi.unit_price), 0) AS discount_rate
FROM orders o
JOIN order_items oi ON oi.order_id = o.order_id
GROUP BY o.channel
