-- Requests and completion on weekends versus weekdays.
SELECT CASE WHEN dayofweek(requested_at) IN (1, 7) THEN 'weekend' ELSE 'weekday' END AS day_type,
       COUNT(*) AS requests,
       COUNT_IF(status = 'completed') AS completed
FROM trips
GROUP BY CASE WHEN dayofweek(requested_at) IN (1, 7) THEN 'weekend' ELSE 'weekday' END
