-- Line chart: daily active users, days taken from the event timestamp.
SELECT to_date(event_time) AS day, COUNT(DISTINCT user_id) AS dau
FROM events
GROUP BY to_date(event_time)
ORDER BY day
