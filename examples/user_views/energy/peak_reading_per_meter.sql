-- Each meter's largest interval reading and when it happened.
SELECT meter_id, read_at, kwh
FROM (
    SELECT meter_id, read_at, kwh,
           ROW_NUMBER() OVER (PARTITION BY meter_id ORDER BY kwh DESC, read_at) AS rn
    FROM readings
    WHERE kwh IS NOT NULL
) t
WHERE rn = 1
