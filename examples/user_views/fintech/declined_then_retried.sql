-- Checkout UX: declined card transactions retried successfully at the same merchant within 10 minutes.
SELECT d.card_id, d.merchant_id, COUNT(*) AS retries
FROM transactions d
JOIN transactions ok
  ON ok.card_id = d.card_id
 AND ok.merchant_id = d.merchant_id
 AND ok.status = 'posted'
 AND ok.created_at BETWEEN d.created_at AND d.created_at + INTERVAL 10 MINUTES
WHERE d.status = 'declined'
GROUP BY d.card_id, d.merchant_id
