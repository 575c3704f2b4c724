-- Leaderboard: the ten most viewed page paths (query string stripped).
SELECT regexp_extract(page_url, '^https?://[^/]+(/[^?#]*)', 1) AS path,
       COUNT(*) AS views
FROM events
WHERE event_name = 'page_view'
GROUP BY 1
ORDER BY views DESC, path
LIMIT 10
