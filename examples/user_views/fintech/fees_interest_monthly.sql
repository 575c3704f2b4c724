-- Revenue: fees charged and interest paid per month.
SELECT date_format(created_at, 'yyyy-MM') AS month,
       SUM(IF(txn_type = 'fee', amount, 0)) AS fees,
       SUM(IF(txn_type = 'interest', amount, 0)) AS interest_paid,
       COUNT(DISTINCT account_id) AS accounts
FROM transactions
WHERE txn_type IN ('fee', 'interest') AND status = 'posted'
GROUP BY date_format(created_at, 'yyyy-MM')
