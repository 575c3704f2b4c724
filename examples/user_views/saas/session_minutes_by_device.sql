-- Engagement table: average session length in minutes per device.
SELECT device,
       ROUND(AVG(duration_seconds) / 60.0, 1) AS avg_minutes,
       COUNT(*) AS sessions
FROM sessions
GROUP BY device
