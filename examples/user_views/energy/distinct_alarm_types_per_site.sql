-- Sites with alarms of at least two different types.
SELECT m.site_id, COUNT(DISTINCT a.alarm_type) AS alarm_types, COUNT(*) AS alarms
FROM alarms a JOIN meters m ON m.meter_id = a.meter_id
GROUP BY m.site_id
HAVING COUNT(DISTINCT a.alarm_type) >= 2
