-- Finance: posted volume converted to EUR with the posting day's rate, per month.
SELECT trunc(t.posted_date, 'MM') AS month,
       SUM(CASE WHEN t.currency = 'EUR' THEN t.amount ELSE t.amount * fx.rate_to_eur END) AS volume_eur,
       COUNT(*) AS txns,
       COUNT_IF(t.currency <> 'EUR' AND fx.rate_to_eur IS NULL) AS missing_rate
FROM transactions t
LEFT JOIN fx_rates fx ON fx.currency = t.currency AND fx.rate_date = t.posted_date
WHERE t.status = 'posted'
GROUP BY trunc(t.posted_date, 'MM')
