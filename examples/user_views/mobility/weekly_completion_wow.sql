-- Weekly completion rate and the change from the week before.
WITH weekly AS (
    SELECT date_trunc('WEEK', requested_at) AS week,
           COUNT(*) AS requests,
           SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS completed
    FROM trips
    GROUP BY date_trunc('WEEK', requested_at)
)
SELECT week, requests, completed,
       ROUND(completed / requests, 3) AS rate,
       ROUND(completed / requests - LAG(completed / requests) OVER (ORDER BY week), 3) AS rate_change
FROM weekly
