-- Product: customers holding open accounts in more than one currency.
SELECT customer_id, COUNT(DISTINCT currency) AS currencies, COUNT(*) AS accounts
FROM accounts
WHERE status <> 'closed'
GROUP BY customer_id
HAVING COUNT(DISTINCT currency) > 1
