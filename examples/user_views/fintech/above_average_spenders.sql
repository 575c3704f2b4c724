-- Marketing: accounts whose purchase spend is above the average account's.
SELECT t.account_id, SUM(t.amount) AS spend
FROM transactions t
WHERE t.txn_type = 'purchase'
GROUP BY t.account_id
HAVING SUM(t.amount) > (
    SELECT SUM(amount) / COUNT(DISTINCT account_id) FROM transactions WHERE txn_type = 'purchase'
)
