-- Compliance: politically exposed customers with their age and posted volume.
SELECT c.customer_id, c.full_name, c.country,
       floor(months_between(DATE '2024-06-30', c.birth_date) / 12) AS age,
       COALESCE(SUM(t.amount), 0) AS volume
FROM customers c
LEFT JOIN accounts a ON a.customer_id = c.customer_id
LEFT JOIN transactions t ON t.account_id = a.account_id AND t.status = 'posted'
WHERE c.is_pep = true
GROUP BY c.customer_id, c.full_name, c.country, c.birth_date
