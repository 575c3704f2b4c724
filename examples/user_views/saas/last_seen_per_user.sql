-- User table: last event time and number of events per user.
SELECT user_id, MAX(event_time) AS last_event_at, COUNT(*) AS events
FROM events
GROUP BY user_id
