-- The three biggest consuming sites in each region.
SELECT region, site_id, site_name, kwh, rnk
FROM (
    SELECT s.region, s.site_id, s.site_name, ROUND(SUM(r.kwh), 1) AS kwh,
           RANK() OVER (PARTITION BY s.region ORDER BY SUM(r.kwh) DESC) AS rnk
    FROM sites s
    JOIN meters m ON m.site_id = s.site_id
    JOIN readings r ON r.meter_id = m.meter_id
    GROUP BY s.region, s.site_id, s.site_name
) ranked
WHERE rnk <= 3
