-- Growth tile: monthly purchase spend per customer segment and its change on the previous month.
WITH monthly AS (
    SELECT c.segment, date_format(t.created_at, 'yyyy-MM') AS month, SUM(t.amount) AS spend
    FROM transactions t
    JOIN accounts a ON a.account_id = t.account_id
    JOIN customers c ON c.customer_id = a.customer_id
    WHERE t.txn_type = 'purchase' AND t.status = 'posted'
    GROUP BY c.segment, date_format(t.created_at, 'yyyy-MM')
)
SELECT segment, month, spend,
       LAG(spend) OVER (PARTITION BY segment ORDER BY month) AS prev_spend,
       spend - LAG(spend) OVER (PARTITION BY segment ORDER BY month) AS change
FROM monthly
