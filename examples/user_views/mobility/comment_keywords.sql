-- Rating comments mentioning the driver or music, cleaned up.
SELECT initcap(trim(comment)) AS comment, COUNT(*) AS mentions, AVG(driver_stars) AS avg_stars
FROM ratings
WHERE lower(comment) LIKE '%driver%' OR lower(comment) LIKE '%music%' OR lower(comment) RLIKE 'great'
GROUP BY initcap(trim(comment))
