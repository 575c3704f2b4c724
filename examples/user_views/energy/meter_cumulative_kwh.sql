-- Register view: each reading with the meter's cumulative energy.
SELECT meter_id, read_at, kwh,
       SUM(kwh) OVER (PARTITION BY meter_id ORDER BY read_at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative_kwh
FROM readings
