-- Stats tile: spread of session length per country.
SELECT country, AVG(duration_seconds) AS mean_seconds, stddev_samp(duration_seconds) AS stddev_seconds
FROM sessions
GROUP BY country
