-- Alarms followed by another alarm on the same meter within seven days.
SELECT a.meter_id, a.alarm_id, a.alarm_type, MIN(b.raised_at) AS next_raised
FROM alarms a
JOIN alarms b
  ON b.meter_id = a.meter_id
 AND b.raised_at > a.raised_at
 AND b.raised_at <= a.raised_at + INTERVAL 7 DAYS
GROUP BY a.meter_id, a.alarm_id, a.alarm_type
