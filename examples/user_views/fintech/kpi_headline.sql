-- Headline tiles: customers with accounts, active accounts, posted purchase volume, transaction count.
SELECT
    COUNT(DISTINCT a.customer_id) AS customers_with_accounts,
    COUNT(DISTINCT CASE WHEN a.status = 'active' THEN a.account_id END) AS active_accounts,
    SUM(CASE WHEN t.status = 'posted' AND t.txn_type = 'purchase' THEN t.amount ELSE 0 END) AS purchase_volume,
    COUNT(t.txn_id) AS txn_count
FROM accounts a
LEFT JOIN transactions t ON t.account_id = a.account_id
