-- Open alarms with their site and region, worst first.
SELECT a.alarm_id, a.alarm_type, a.severity, a.raised_at, m.serial_no, s.site_name, s.region
FROM alarms a
JOIN meters m ON m.meter_id = a.meter_id
LEFT JOIN sites s ON s.site_id = m.site_id
WHERE a.cleared_at IS NULL
