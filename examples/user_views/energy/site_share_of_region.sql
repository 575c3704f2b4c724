-- Each site's share of its region's consumption.
SELECT region, site_id, kwh,
       ROUND(100 * kwh / SUM(kwh) OVER (PARTITION BY region), 2) AS pct_of_region
FROM (
    SELECT s.region, s.site_id, SUM(r.kwh) AS kwh
    FROM sites s
    JOIN meters m ON m.site_id = s.site_id
    JOIN readings r ON r.meter_id = m.meter_id
    GROUP BY s.region, s.site_id
) x
