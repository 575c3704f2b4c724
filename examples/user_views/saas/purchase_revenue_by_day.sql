-- Revenue chart: in-app purchase revenue per day.
SELECT event_date, SUM(revenue) AS revenue, COUNT(*) AS purchases
FROM events
WHERE event_name = 'purchase'
GROUP BY event_date
ORDER BY event_date
