-- Alarm counts by type and severity with all subtotals.
SELECT COALESCE(alarm_type, 'ALL') AS alarm_type, severity, COUNT(*) AS alarms,
       GROUPING(severity) AS severity_total
FROM alarms
GROUP BY CUBE (alarm_type, severity)
