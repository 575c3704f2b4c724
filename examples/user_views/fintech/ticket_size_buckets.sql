-- Histogram: card purchases by ticket size.
SELECT CASE
           WHEN amount < 10 THEN '0-10'
           WHEN amount < 50 THEN '10-50'
           WHEN amount < 200 THEN '50-200'
           WHEN amount < 1000 THEN '200-1000'
           ELSE '1000+'
       END AS bucket,
       COUNT(*) AS txns,
       SUM(amount) AS volume
FROM transactions
WHERE txn_type = 'purchase'
GROUP BY 1
