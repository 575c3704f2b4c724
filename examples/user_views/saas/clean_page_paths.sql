-- Content table: events per cleaned page URL (lower-cased, query string removed).
SELECT lower(trim(regexp_replace(page_url, '\\?.*$', ''))) AS page, COUNT(*) AS events
FROM events
WHERE page_url IS NOT NULL
GROUP BY 1
