-- Credit risk: each credit account's balance (purchases less repayments) against its limit.
WITH bal AS (
    SELECT a.account_id, a.credit_limit,
           SUM(CASE WHEN t.txn_type = 'purchase' THEN t.amount
                    WHEN t.txn_type = 'transfer_in' THEN -t.amount
                    ELSE 0 END) AS balance
    FROM accounts a
    JOIN transactions t ON t.account_id = a.account_id
    WHERE a.account_type = 'credit' AND t.status = 'posted'
    GROUP BY a.account_id, a.credit_limit
)
SELECT account_id, credit_limit, balance,
       CASE
           WHEN credit_limit IS NULL OR credit_limit = 0 THEN 'no limit'
           WHEN balance / credit_limit >= 0.9 THEN 'high'
           WHEN balance / credit_limit >= 0.5 THEN 'medium'
           ELSE 'low'
       END AS utilization
FROM bal
