-- Fraud rule: two transactions on the same card within 2 minutes at different merchants.
SELECT t1.card_id, t1.txn_id AS first_txn, t2.txn_id AS second_txn,
       t1.created_at AS first_at, t2.created_at AS second_at,
       t1.merchant_id AS first_merchant, t2.merchant_id AS second_merchant
FROM transactions t1
JOIN transactions t2
  ON t1.card_id = t2.card_id
 AND t2.created_at > t1.created_at
 AND t2.created_at <= t1.created_at + INTERVAL 2 MINUTES
 AND t1.merchant_id <> t2.merchant_id
