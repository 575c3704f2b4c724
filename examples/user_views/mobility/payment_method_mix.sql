-- Captured payment volume by method with its share of the total.
SELECT COALESCE(method, 'unknown') AS method,
       SUM(amount) AS volume,
       ROUND(SUM(amount) * 100 / SUM(SUM(amount)) OVER (), 2) AS share_pct
FROM payments
WHERE status = 'captured'
GROUP BY COALESCE(method, 'unknown')
