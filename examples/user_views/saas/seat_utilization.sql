-- Account health: users per account against the seats of its active subscription.
SELECT s.account_id, s.seats, COUNT(u.user_id) AS users,
       ROUND(COUNT(u.user_id) / s.seats, 2) AS utilization
FROM subscriptions s
JOIN users u ON u.account_id = s.account_id
WHERE s.status = 'active'
GROUP BY s.account_id, s.seats
