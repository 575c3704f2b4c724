-- Header KPI: monthly recurring revenue and ARR of active subscriptions.
SELECT SUM(mrr) AS mrr, SUM(mrr) * 12 AS arr
FROM subscriptions
WHERE status = 'active'
