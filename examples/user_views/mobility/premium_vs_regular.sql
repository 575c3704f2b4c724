-- Completed trips and fares for premium and regular riders, one row each.
SELECT 'premium' AS tier, COUNT(*) AS trips, SUM(t.fare) AS fares
FROM trips t JOIN riders r ON r.rider_id = t.rider_id
WHERE r.is_premium = true AND t.status = 'completed'
UNION ALL
SELECT 'regular' AS tier, COUNT(*) AS trips, SUM(t.fare) AS fares
FROM trips t JOIN riders r ON r.rider_id = t.rider_id
WHERE NOT r.is_premium AND t.status = 'completed'
