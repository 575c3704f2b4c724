-- Payments gauge: failed payment attempts per method.
SELECT method,
       count_if(status = 'failed') AS failed,
       COUNT(*) AS attempts,
       ROUND(count_if(status = 'failed') / COUNT(*), 3) AS failure_rate
FROM payments
GROUP BY method
