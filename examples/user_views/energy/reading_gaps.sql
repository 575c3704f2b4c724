-- Gaps of more than twelve hours between a meter's consecutive readings.
SELECT meter_id, prev_read_at, read_at,
       (unix_timestamp(read_at) - unix_timestamp(prev_read_at)) / 3600 AS gap_hours
FROM (
    SELECT meter_id, read_at, LAG(read_at) OVER (PARTITION BY meter_id ORDER BY read_at) AS prev_read_at
    FROM readings
) g
WHERE unix_timestamp(read_at) - unix_timestamp(prev_read_at) > 12 * 3600
