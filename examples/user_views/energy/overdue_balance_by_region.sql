-- Outstanding (issued or overdue) bill balances per region.
SELECT s.region, b.status, COUNT(*) AS bills, SUM(b.amount) AS outstanding
FROM bills b
JOIN sites s ON s.site_id = b.site_id
WHERE b.status IN ('issued', 'overdue')
GROUP BY s.region, b.status
