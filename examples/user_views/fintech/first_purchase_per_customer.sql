-- Acquisition: each customer's first card purchase and where it happened.
SELECT customer_id, txn_id, created_at, merchant_name, amount
FROM (
    SELECT a.customer_id, t.txn_id, t.created_at, m.name AS merchant_name, t.amount,
           ROW_NUMBER() OVER (PARTITION BY a.customer_id ORDER BY t.created_at, t.txn_id) AS rn
    FROM transactions t
    JOIN accounts a ON a.account_id = t.account_id
    LEFT JOIN merchants m ON m.merchant_id = t.merchant_id
    WHERE t.txn_type = 'purchase'
) x
WHERE rn = 1
