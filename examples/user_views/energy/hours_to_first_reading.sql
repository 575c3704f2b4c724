-- Hours from a meter's installation to its first reading.
SELECT m.meter_id, m.installed_at, MIN(r.read_at) AS first_read,
       ROUND((unix_timestamp(MIN(r.read_at)) - unix_timestamp(m.installed_at)) / 3600.0, 1) AS hours_to_first
FROM meters m
JOIN readings r ON r.meter_id = m.meter_id
GROUP BY m.meter_id, m.installed_at
