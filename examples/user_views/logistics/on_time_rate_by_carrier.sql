-- SLA: on-time delivery rate per carrier (delivered by the promised date).
SELECT c.name AS carrier, COUNT(*) AS delivered,
       SUM(CASE WHEN to_date(s.delivered_at) <= s.promised_date THEN 1 ELSE 0 END) AS on_time,
       ROUND(AVG(CASE WHEN to_date(s.delivered_at) <= s.promised_date THEN 1.0 ELSE 0.0 END) * 100, 1) AS on_time_pct
FROM shipments s
JOIN routes r ON r.route_id = s.route_id
JOIN carriers c ON c.carrier_id = r.carrier_id
WHERE s.delivered_at IS NOT NULL
GROUP BY c.name
