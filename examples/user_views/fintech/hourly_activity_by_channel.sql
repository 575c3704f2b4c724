-- Heatmap: transactions by hour of day and channel, with declines.
SELECT hour(created_at) AS hour_of_day, channel, COUNT(*) AS txns,
       SUM(CASE WHEN status = 'declined' THEN 1 ELSE 0 END) AS declined
FROM transactions
GROUP BY hour(created_at), channel
