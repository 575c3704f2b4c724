-- Reactivation list: active accounts that never had a posted transaction.
SELECT a.account_id, a.customer_id, a.account_type, a.opened_on
FROM accounts a
LEFT JOIN transactions t ON t.account_id = a.account_id AND t.status = 'posted'
WHERE a.status = 'active' AND t.txn_id IS NULL
