-- Riders per email domain.
SELECT lower(substring_index(email, '@', -1)) AS domain, COUNT(*) AS riders
FROM riders
WHERE email LIKE '%@%'
GROUP BY lower(substring_index(email, '@', -1))
