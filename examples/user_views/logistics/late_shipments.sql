-- Customer service: shipments delivered more than a day late, with carrier and origin city.
SELECT s.shipment_id, s.customer_ref, s.promised_date, s.delivered_at,
       c.name AS carrier, o.city AS origin_city,
       datediff(to_date(s.delivered_at), s.promised_date) AS days_late
FROM shipments s
LEFT JOIN routes r ON r.route_id = s.route_id
LEFT JOIN carriers c ON c.carrier_id = r.carrier_id
LEFT JOIN warehouses o ON o.warehouse_id = r.origin_warehouse_id
WHERE datediff(to_date(s.delivered_at), s.promised_date) > 1
