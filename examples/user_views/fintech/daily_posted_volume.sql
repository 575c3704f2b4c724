-- Ops chart: posted transactions and volume per posting day and currency.
SELECT posted_date, currency, COUNT(*) AS txns, SUM(amount) AS volume, ROUND(AVG(amount), 2) AS avg_ticket
FROM transactions
WHERE status = 'posted'
GROUP BY posted_date, currency
