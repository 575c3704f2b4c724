-- Customer 360: every customer with their account and card counts and latest account opening.
SELECT c.customer_id, c.full_name, c.segment,
       COUNT(DISTINCT a.account_id) AS accounts,
       COUNT(DISTINCT k.card_id) AS cards,
       MAX(a.opened_on) AS last_account_opened
FROM customers c
LEFT JOIN accounts a ON a.customer_id = c.customer_id
LEFT JOIN cards k ON k.account_id = a.account_id
GROUP BY c.customer_id, c.full_name, c.segment
