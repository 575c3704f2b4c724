-- Escalation: carriers marked inactive that still carry open shipments.
SELECT c.carrier_id, c.name
FROM carriers c
WHERE NOT c.is_active
  AND EXISTS (
      SELECT 1
      FROM routes r
      JOIN shipments s ON s.route_id = r.route_id
      WHERE r.carrier_id = c.carrier_id AND s.status IN ('created', 'in_transit')
  )
