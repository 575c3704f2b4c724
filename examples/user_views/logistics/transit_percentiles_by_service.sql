-- SLA: median and 90th percentile transit hours per carrier service level.
SELECT c.service_level,
       percentile_approx(timestampdiff(HOUR, s.created_at, s.delivered_at), 0.5) AS median_hours,
       percentile_approx(timestampdiff(HOUR, s.created_at, s.delivered_at), 0.9) AS p90_hours,
       COUNT(*) AS shipments
FROM shipments s
JOIN routes r ON r.route_id = s.route_id
JOIN carriers c ON c.carrier_id = r.carrier_id
WHERE s.delivered_at IS NOT NULL
GROUP BY c.service_level
