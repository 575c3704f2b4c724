-- Support tile: open tickets per priority.
SELECT priority, COUNT(*) AS open_tickets
FROM support_tickets
WHERE closed_at IS NULL
GROUP BY priority
