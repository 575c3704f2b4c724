-- Reverse logistics: share of shipments returned per origin country.
SELECT w.country, COUNT(*) AS shipments,
       COUNT_IF(s.status = 'returned') AS returned,
       ROUND(COUNT_IF(s.status = 'returned') / COUNT(*), 4) AS return_rate
FROM shipments s
JOIN routes r ON r.route_id = s.route_id
JOIN warehouses w ON w.warehouse_id = r.origin_warehouse_id
GROUP BY w.country
