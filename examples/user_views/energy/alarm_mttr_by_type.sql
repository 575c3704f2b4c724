-- Mean time to clear, in hours, per alarm type.
SELECT alarm_type,
       COUNT(*) AS cleared,
       ROUND(AVG(timestampdiff(MINUTE, raised_at, cleared_at)) / 60, 2) AS mttr_hours,
       MAX(timestampdiff(HOUR, raised_at, cleared_at)) AS worst_hours
FROM alarms
WHERE cleared_at IS NOT NULL
GROUP BY alarm_type
