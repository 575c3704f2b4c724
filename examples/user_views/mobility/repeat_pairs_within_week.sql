-- Rider/driver pairs matched again within seven days (possible collusion).
SELECT a.rider_id, a.driver_id, COUNT(*) AS repeat_matches
FROM trips a
JOIN trips b
  ON a.rider_id = b.rider_id AND a.driver_id = b.driver_id AND a.trip_id < b.trip_id
 AND b.requested_at BETWEEN a.requested_at AND a.requested_at + INTERVAL 7 DAYS
GROUP BY a.rider_id, a.driver_id
