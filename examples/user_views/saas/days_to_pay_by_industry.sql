-- Finance table: average days from invoice to payment per industry.
SELECT coalesce(a.industry, 'unknown') AS industry,
       AVG(datediff(i.paid_on, i.issued_on)) AS avg_days_to_pay
FROM invoices i
JOIN accounts a ON a.account_id = i.account_id
WHERE i.paid_on IS NOT NULL
GROUP BY coalesce(a.industry, 'unknown')
