-- Readings from meters not (yet) in the meter register.
SELECT meter_id, COUNT(*) AS readings, MIN(read_at) AS first_seen, SUM(kwh) AS kwh
FROM readings
WHERE meter_id NOT IN (SELECT meter_id FROM meters)
GROUP BY meter_id
