-- Table: payments per method, captured vs failed.
SELECT method,
       COUNT(*) FILTER (WHERE status = 'captured') AS captured,
       COUNT(*) FILTER (WHERE status = 'failed') AS failed,
       SUM(amount) FILTER (WHERE status = 'captured') AS captured_amount
FROM payments
GROUP BY method
