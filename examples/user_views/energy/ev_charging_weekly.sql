-- Weekly EV charging intervals with energy delivered.
SELECT weekofyear(r.read_at) AS week, COUNT(*) AS charging_intervals, ROUND(SUM(r.kwh), 1) AS kwh
FROM readings r
WHERE r.kwh > 0
  AND r.meter_id IN (SELECT meter_id FROM meters WHERE lower(meter_type) = 'ev_charger')
GROUP BY weekofyear(r.read_at)
