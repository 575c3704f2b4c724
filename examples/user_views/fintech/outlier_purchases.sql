-- Fraud review: purchases above three times the account's average purchase (accounts with 5+ purchases).
SELECT t.txn_id, t.account_id, t.amount, avgs.avg_amount
FROM transactions t
JOIN (
    SELECT account_id, AVG(amount) AS avg_amount, COUNT(*) AS n
    FROM transactions
    WHERE txn_type = 'purchase'
    GROUP BY account_id
) avgs ON avgs.account_id = t.account_id
WHERE t.txn_type = 'purchase' AND avgs.n >= 5 AND t.amount > 3 * avgs.avg_amount
