-- Line chart: weekly active users.
SELECT date_trunc('week', event_time) AS week, COUNT(DISTINCT user_id) AS wau
FROM events
GROUP BY date_trunc('week', event_time)
ORDER BY week
