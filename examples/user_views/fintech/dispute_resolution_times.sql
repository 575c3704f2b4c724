-- Disputes: count, average days to resolve and refunded amount per reason and status.
SELECT reason, status, COUNT(*) AS disputes,
       AVG(datediff(resolved_on, to_date(opened_at))) AS avg_days_to_resolve,
       SUM(COALESCE(refunded, 0)) AS refunded
FROM disputes
GROUP BY reason, status
