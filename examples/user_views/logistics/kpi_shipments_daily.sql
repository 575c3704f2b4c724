-- Ops tile: shipments created per day, how many shipped and how many are delivered.
SELECT to_date(created_at) AS day, COUNT(*) AS created,
       COUNT(ship_date) AS shipped,
       COUNT_IF(status = 'delivered') AS delivered
FROM shipments
GROUP BY to_date(created_at)
