-- Trips charged more than once.
SELECT trip_id, COUNT(*) AS captures, SUM(amount) AS charged
FROM payments
WHERE status = 'captured'
GROUP BY trip_id
HAVING COUNT(*) > 1
