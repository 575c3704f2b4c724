-- Billed amounts by region and month, by region, and in total.
SELECT s.region, b.period_start, SUM(b.amount) AS billed, COUNT(*) AS bills
FROM bills b JOIN sites s ON s.site_id = b.site_id
WHERE b.status <> 'cancelled'
GROUP BY GROUPING SETS ((s.region, b.period_start), (s.region), ())
