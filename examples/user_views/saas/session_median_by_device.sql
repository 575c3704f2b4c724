-- Stats tile: median and 90th percentile session length per device.
SELECT device,
       percentile(duration_seconds, 0.5) AS median_seconds,
       percentile(duration_seconds, 0.9) AS p90_seconds
FROM sessions
GROUP BY device
