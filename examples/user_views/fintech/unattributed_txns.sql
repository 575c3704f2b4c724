-- Data quality: transactions without a known merchant, by type, channel and kind of gap.
SELECT t.txn_type, t.channel,
       CASE WHEN t.merchant_id IS NULL THEN 'no merchant' ELSE 'unknown merchant id' END AS issue,
       COUNT(*) AS txns
FROM transactions t
LEFT JOIN merchants m ON m.merchant_id = t.merchant_id
WHERE m.merchant_id IS NULL
GROUP BY t.txn_type, t.channel, CASE WHEN t.merchant_id IS NULL THEN 'no merchant' ELSE 'unknown merchant id' END
