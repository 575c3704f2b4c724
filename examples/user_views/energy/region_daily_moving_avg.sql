-- Daily regional consumption with a 7-day moving average.
WITH daily AS (
    SELECT trim(s.region) AS region, CAST(r.read_at AS DATE) AS d, SUM(r.kwh) AS kwh
    FROM readings r
    JOIN meters m ON m.meter_id = r.meter_id
    JOIN sites s ON s.site_id = m.site_id
    GROUP BY trim(s.region), CAST(r.read_at AS DATE)
)
SELECT region, d, ROUND(kwh, 2) AS kwh,
       ROUND(AVG(kwh) OVER (PARTITION BY region ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW), 2) AS kwh_7d
FROM daily
