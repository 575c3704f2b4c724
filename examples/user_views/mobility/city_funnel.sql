-- Funnel per city: requested, matched, completed, rated.
SELECT t.city_id,
       COUNT(*) AS requested,
       COUNT(t.driver_id) AS matched,
       SUM(CASE WHEN t.status = 'completed' THEN 1 ELSE 0 END) AS completed,
       SUM(CASE WHEN EXISTS (SELECT 1 FROM ratings r WHERE r.trip_id = t.trip_id) THEN 1 ELSE 0 END) AS rated
FROM trips t
GROUP BY t.city_id
