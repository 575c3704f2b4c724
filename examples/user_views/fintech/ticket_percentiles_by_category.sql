-- Pricing: median and 90th percentile purchase amount per merchant category.
SELECT m.category,
       percentile(t.amount, 0.5) AS median_ticket,
       percentile(t.amount, 0.9) AS p90_ticket,
       COUNT(*) AS purchases
FROM transactions t
JOIN merchants m ON m.merchant_id = t.merchant_id
WHERE t.txn_type = 'purchase'
GROUP BY m.category
