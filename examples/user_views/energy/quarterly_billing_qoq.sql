-- Quarterly billed amount per site type with quarter-over-quarter change.
SELECT site_type, qtr, billed,
       billed - LAG(billed, 1, 0) OVER (PARTITION BY site_type ORDER BY qtr) AS qoq_change
FROM (
    SELECT s.site_type, quarter(b.period_start) AS qtr, SUM(b.amount) AS billed
    FROM bills b JOIN sites s ON b.site_id = s.site_id
    WHERE b.status != 'cancelled'
    GROUP BY s.site_type, quarter(b.period_start)
) q
