-- Funnel per day: users with a page view and with a purchase, using FILTER.
SELECT event_date,
       COUNT(DISTINCT user_id) FILTER (WHERE event_name = 'page_view') AS viewers,
       COUNT(DISTINCT user_id) FILTER (WHERE event_name = 'purchase') AS buyers
FROM events
GROUP BY event_date
