-- Days from issue to payment, by bill status and month.
SELECT date_format(issued_at, 'yyyy-MM') AS issue_month,
       COUNT(*) AS paid_bills,
       ROUND(AVG(datediff(paid_on, to_date(issued_at))), 1) AS avg_days_to_pay,
       MAX(datediff(paid_on, CAST(issued_at AS DATE))) AS max_days
FROM bills
WHERE status = 'paid'
GROUP BY date_format(issued_at, 'yyyy-MM')
