-- Engagement: average hours between consecutive transactions of an account.
SELECT account_id, COUNT(*) AS gaps,
       ROUND(AVG((unix_timestamp(created_at) - unix_timestamp(prev_at)) / 3600.0), 2) AS avg_gap_hours
FROM (
    SELECT account_id, created_at,
           LAG(created_at) OVER (PARTITION BY account_id ORDER BY created_at, txn_id) AS prev_at
    FROM transactions
) s
WHERE prev_at IS NOT NULL
GROUP BY account_id
