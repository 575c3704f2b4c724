-- Refunded share of payments per method.
SELECT method,
       COUNT(*) AS payments,
       SUM(CASE WHEN status = 'refunded' THEN 1 ELSE 0 END) AS refunds,
       ROUND(SUM(CASE WHEN status = 'refunded' THEN amount ELSE 0 END) / NULLIF(SUM(amount), 0), 4) AS refunded_share
FROM payments
WHERE method IS NOT NULL
GROUP BY method
