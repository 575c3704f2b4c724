-- Support tile: average hours to close a ticket per priority.
SELECT priority,
       AVG((unix_timestamp(closed_at) - unix_timestamp(opened_at)) / 3600.0) AS avg_hours_to_close,
       COUNT(*) AS closed_tickets
FROM support_tickets
WHERE closed_at IS NOT NULL
GROUP BY priority
