-- Traffic tile: events from internal accounts vs customers.
SELECT CASE WHEN a.is_internal THEN 'internal' ELSE 'customer' END AS audience,
       COUNT(*) AS events
FROM events e
JOIN users u ON u.user_id = e.user_id
JOIN accounts a ON a.account_id = u.account_id
GROUP BY CASE WHEN a.is_internal THEN 'internal' ELSE 'customer' END
