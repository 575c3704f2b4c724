-- Leaderboard: the five highest-earning drivers in each city.
WITH earnings AS (
    SELECT d.city_id, d.driver_id, d.full_name, SUM(t.fare) AS earned, COUNT(*) AS trips
    FROM trips t
    JOIN drivers d ON d.driver_id = t.driver_id
    WHERE t.status = 'completed'
    GROUP BY d.city_id, d.driver_id, d.full_name
), ranked AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY city_id ORDER BY earned DESC, driver_id) AS rn
    FROM earnings
)
SELECT city_id, driver_id, full_name, earned, trips, rn
FROM ranked
WHERE rn <= 5
