-- Upsell list: accounts with more active users than the seats they pay for.
SELECT u.account_id, COUNT(*) AS active_users, MAX(s.seats) AS seats
FROM users u
JOIN subscriptions s ON s.account_id = u.account_id AND s.status = 'active'
WHERE u.is_active
GROUP BY u.account_id
HAVING COUNT(*) > MAX(s.seats)
