-- Readings with voltage more than 10 V away from 230 V, per meter.
SELECT meter_id, COUNT(*) AS excursions, MIN(voltage) AS lowest, MAX(voltage) AS highest
FROM readings
WHERE abs(voltage - 230) > 10
GROUP BY meter_id
