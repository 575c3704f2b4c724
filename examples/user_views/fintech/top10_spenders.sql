-- Leaderboard: the ten customers with the most posted purchase spend.
SELECT c.customer_id, c.full_name, SUM(t.amount) AS spend
FROM transactions t
JOIN accounts a ON a.account_id = t.account_id
JOIN customers c ON c.customer_id = a.customer_id
WHERE t.txn_type = 'purchase' AND t.status = 'posted'
GROUP BY c.customer_id, c.full_name
ORDER BY spend DESC
LIMIT 10
