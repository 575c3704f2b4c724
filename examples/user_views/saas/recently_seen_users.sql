-- User table: users seen since March, with their account.
SELECT u.user_id, u.email, a.name AS account
FROM users u
JOIN accounts a ON a.account_id = u.account_id
WHERE u.last_seen_date >= DATE '2024-03-01'
