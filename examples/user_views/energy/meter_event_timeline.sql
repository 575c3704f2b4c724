-- Daily event count per meter: alarms raised and visits made.
SELECT meter_id, event_day, COUNT(*) AS events, SUM(is_alarm) AS alarms
FROM (
    SELECT meter_id, CAST(raised_at AS DATE) AS event_day, 1 AS is_alarm FROM alarms
    UNION ALL
    SELECT meter_id, visit_date AS event_day, 0 AS is_alarm FROM visits
) e
GROUP BY meter_id, event_day
