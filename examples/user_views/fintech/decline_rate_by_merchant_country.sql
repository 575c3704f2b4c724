-- Risk tile: decline rate per merchant country, for countries with at least 20 attempts.
SELECT m.country, COUNT(*) AS attempts,
       COUNT_IF(t.status = 'declined') AS declines,
       ROUND(100.0 * COUNT_IF(t.status = 'declined') / COUNT(*), 2) AS decline_pct
FROM transactions t
JOIN merchants m ON m.merchant_id = t.merchant_id
GROUP BY m.country
HAVING COUNT(*) >= 20
