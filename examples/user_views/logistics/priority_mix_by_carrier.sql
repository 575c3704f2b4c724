-- Carrier mix: shipments per carrier by priority, pivoted by hand.
SELECT c.name,
       COUNT(CASE WHEN s.priority = 'express' THEN 1 END) AS express,
       COUNT(CASE WHEN s.priority = 'standard' THEN 1 END) AS standard,
       COUNT(CASE WHEN s.priority = 'economy' THEN 1 END) AS economy,
       COUNT(*) AS total
FROM shipments s
JOIN routes r ON r.route_id = s.route_id
JOIN carriers c ON c.carrier_id = r.carrier_id
GROUP BY c.name
