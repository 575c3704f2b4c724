-- Security tile: users whose e-mail domain differs from their account's domain.
SELECT a.account_id, COUNT(*) AS external_users
FROM users u
JOIN accounts a ON a.account_id = u.account_id
WHERE lower(split_part(u.email, '@', 2)) <> lower(a.domain)
GROUP BY a.account_id
