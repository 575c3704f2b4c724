-- Device tile: share of sessions from mobile devices per country.
SELECT country,
       AVG(CASE WHEN device IN ('ios', 'android') THEN 1.0 ELSE 0.0 END) AS mobile_share
FROM sessions
GROUP BY country
