-- Consumption by local (UK) hour of the reading.
SELECT hour(from_utc_timestamp(read_at, 'Europe/London')) AS local_hour,
       COUNT(*) AS readings, ROUND(SUM(kwh), 2) AS kwh
FROM readings
GROUP BY hour(from_utc_timestamp(read_at, 'Europe/London'))
