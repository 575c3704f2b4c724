-- Spend mix: card purchases per month and merchant category.
SELECT date_trunc('MONTH', t.created_at) AS month, m.category, COUNT(*) AS purchases, SUM(t.amount) AS spend
FROM transactions t
JOIN merchants m ON m.merchant_id = t.merchant_id
WHERE t.txn_type = 'purchase' AND t.status IN ('posted', 'pending')
GROUP BY date_trunc('MONTH', t.created_at), m.category
