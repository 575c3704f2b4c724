-- Chargebacks: disputed share of each merchant's purchases, merchants with any dispute.
SELECT m.name, COUNT(t.txn_id) AS purchases, COUNT(d.dispute_id) AS disputes,
       ROUND(COUNT(d.dispute_id) / COUNT(t.txn_id), 4) AS dispute_rate
FROM merchants m
JOIN transactions t ON t.merchant_id = m.merchant_id AND t.txn_type = 'purchase'
LEFT JOIN disputes d ON d.txn_id = t.txn_id
GROUP BY m.name
HAVING COUNT(d.dispute_id) > 0
