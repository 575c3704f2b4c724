-- Lane performance: average and worst transit hours per lane, against the plan.
SELECT o.code AS origin, d.code AS destination, r.planned_hours,
       ROUND(AVG((unix_timestamp(s.delivered_at) - unix_timestamp(s.created_at)) / 3600.0), 1) AS avg_hours,
       MAX(timestampdiff(HOUR, s.created_at, s.delivered_at)) AS worst_hours,
       COUNT(*) AS shipments
FROM shipments s
JOIN routes r ON r.route_id = s.route_id
JOIN warehouses o ON o.warehouse_id = r.origin_warehouse_id
JOIN warehouses d ON d.warehouse_id = r.dest_warehouse_id
WHERE s.status = 'delivered'
GROUP BY o.code, d.code, r.planned_hours
