-- Stats tile: median order value per channel.
SELECT channel, median(order_total) AS median_order_value
FROM (
    SELECT o.order_id, o.channel, SUM(oi.quantity * oi.unit_price) AS order_total
    FROM orders o
    JOIN order_items oi ON oi.order_id = o.order_id
    GROUP BY o.order_id, o.channel
) t
GROUP BY channel
