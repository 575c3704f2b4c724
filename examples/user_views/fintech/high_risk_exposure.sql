-- Compliance: customers with more than 500 of posted spend at high-risk merchants.
SELECT c.customer_id, c.full_name, c.country,
       SUM(t.amount) AS high_risk_spend,
       COUNT(DISTINCT t.merchant_id) AS merchants
FROM customers c
JOIN accounts a ON a.customer_id = c.customer_id
JOIN transactions t ON t.account_id = a.account_id
JOIN merchants m ON m.merchant_id = t.merchant_id
WHERE m.is_high_risk AND t.status = 'posted'
GROUP BY c.customer_id, c.full_name, c.country
HAVING SUM(t.amount) > 500
