-- Account page: the three most active users of each account.
SELECT account_id, user_id, events
FROM (
    SELECT u.account_id, u.user_id, COUNT(*) AS events,
           RANK() OVER (PARTITION BY u.account_id ORDER BY COUNT(*) DESC) AS rnk
    FROM users u
    JOIN events e ON e.user_id = u.user_id
    GROUP BY u.account_id, u.user_id
) r
WHERE rnk <= 3
