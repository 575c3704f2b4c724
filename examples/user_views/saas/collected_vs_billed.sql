-- Finance KPI: amount collected vs billed.
SELECT SUM(CASE WHEN status = 'paid' THEN amount ELSE 0 END) AS collected,
       SUM(amount) AS billed,
       COUNT(*) AS invoices
FROM invoices
