-- Merchant retention: merchants with purchases in both Q1 and Q2.
SELECT merchant_id FROM transactions
WHERE txn_type = 'purchase' AND created_at < TIMESTAMP '2024-04-01 00:00:00'
INTERSECT
SELECT merchant_id FROM transactions
WHERE txn_type = 'purchase' AND created_at >= TIMESTAMP '2024-04-01 00:00:00'
