-- Share of completed trips driven in electric cars per city.
SELECT t.city_id,
       ROUND(SUM(CASE WHEN v.is_electric THEN 1 ELSE 0 END) / COUNT(*), 3) AS ev_share,
       COUNT(*) AS trips
FROM trips t, drivers d, vehicles v
WHERE t.driver_id = d.driver_id AND d.vehicle_id = v.vehicle_id AND t.status = 'completed'
GROUP BY t.city_id
