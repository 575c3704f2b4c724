-- Merchant quality: refunds against purchases per merchant.
SELECT m.merchant_id, m.name,
       SUM(CASE WHEN t.txn_type = 'purchase' THEN t.amount ELSE 0 END) AS purchases,
       SUM(CASE WHEN t.txn_type = 'refund' THEN t.amount ELSE 0 END) AS refunds,
       ROUND(SUM(CASE WHEN t.txn_type = 'refund' THEN t.amount ELSE 0 END)
             / NULLIF(SUM(CASE WHEN t.txn_type = 'purchase' THEN t.amount ELSE 0 END), 0), 4) AS refund_ratio
FROM merchants m
JOIN transactions t ON t.merchant_id = m.merchant_id
WHERE t.status = 'posted'
GROUP BY m.merchant_id, m.name
