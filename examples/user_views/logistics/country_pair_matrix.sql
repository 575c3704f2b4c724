-- Cross-border: shipments per origin and destination country.
SELECT o.country AS origin_country, d.country AS dest_country,
       o.country <> d.country AS cross_border,
       COUNT(s.shipment_id) AS shipments
FROM shipments s
JOIN routes r ON r.route_id = s.route_id
JOIN warehouses o ON o.warehouse_id = r.origin_warehouse_id
JOIN warehouses d ON d.warehouse_id = r.dest_warehouse_id
GROUP BY o.country, d.country
