-- Histogram of completed-trip fares.
SELECT CASE WHEN fare < 10 THEN 'a) under 10'
            WHEN fare < 20 THEN 'b) 10-20'
            WHEN fare < 40 THEN 'c) 20-40'
            ELSE 'd) 40+' END AS fare_bucket,
       COUNT(*) AS trips,
       SUM(fare) AS total
FROM trips
WHERE status = 'completed'
GROUP BY 1
