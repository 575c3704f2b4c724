-- Statement view: each posted transaction with the account's running balance.
SELECT account_id, txn_id, created_at, signed_amount,
       SUM(signed_amount) OVER (PARTITION BY account_id ORDER BY created_at, txn_id
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running_balance
FROM (
    SELECT account_id, txn_id, created_at,
           CASE WHEN txn_type IN ('transfer_in', 'refund', 'interest') THEN amount ELSE -amount END AS signed_amount
    FROM transactions
    WHERE status = 'posted'
) t
