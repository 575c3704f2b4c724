-- Ops list: paid orders with no shipment yet.
SELECT o.order_id, o.customer_id, o.order_date
FROM orders o
WHERE o.status = 'paid'
  AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.order_id)
