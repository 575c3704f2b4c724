-- Heatmap: events per hour of day.
SELECT hour(event_time) AS hour_of_day, COUNT(*) AS events
FROM events
GROUP BY hour(event_time)
