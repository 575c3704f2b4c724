-- Severe alarms that no technician visit has followed up.
SELECT a.alarm_id, a.meter_id, a.alarm_type, a.raised_at
FROM alarms a
LEFT JOIN visits v ON v.alarm_id = a.alarm_id
WHERE v.visit_id IS NULL AND a.severity >= 2
