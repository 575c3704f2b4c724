-- Drivers with at least five ratings averaging below 4.5 stars.
SELECT t.driver_id, COUNT(*) AS ratings, ROUND(AVG(r.driver_stars), 2) AS avg_stars
FROM ratings r
INNER JOIN trips t ON t.trip_id = r.trip_id
GROUP BY t.driver_id
HAVING COUNT(r.driver_stars) >= 5 AND AVG(r.driver_stars) < 4.5
