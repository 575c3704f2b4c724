-- Finance exceptions: orders whose captured payments differ from the order total.
SELECT t.order_id, t.order_total, coalesce(p.paid, 0) AS paid,
       ABS(t.order_total - coalesce(p.paid, 0)) AS difference
FROM (SELECT order_id, SUM(quantity * unit_price - discount) AS order_total
      FROM order_items GROUP BY order_id) t
LEFT JOIN (SELECT order_id, SUM(amount) AS paid
           FROM payments WHERE status = 'captured' GROUP BY order_id) p
  ON p.order_id = t.order_id
WHERE t.order_total <> coalesce(p.paid, 0)
