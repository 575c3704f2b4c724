-- Finance chart: amount billed per month (tax included).
SELECT date_trunc('MONTH', issued_on) AS month,
       SUM(amount + tax) AS billed
FROM invoices
GROUP BY date_trunc('MONTH', issued_on)
ORDER BY month
