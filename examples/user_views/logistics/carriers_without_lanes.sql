-- Procurement: carriers that no lane uses.
SELECT c.carrier_id, c.name, c.service_level
FROM carriers c
LEFT JOIN routes r ON r.carrier_id = c.carrier_id
WHERE r.route_id IS NULL
