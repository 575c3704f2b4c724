-- Meters split into quartiles by alarm count.
SELECT meter_id, alarm_count, NTILE(4) OVER (ORDER BY alarm_count DESC, meter_id) AS quartile
FROM (SELECT meter_id, COUNT(*) AS alarm_count FROM alarms GROUP BY meter_id) c
