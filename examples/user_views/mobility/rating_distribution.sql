-- Distribution of the stars riders give drivers, unrated shown separately.
SELECT COALESCE(CAST(driver_stars AS STRING), 'not rated') AS stars, COUNT(*) AS ratings
FROM ratings
GROUP BY COALESCE(CAST(driver_stars AS STRING), 'not rated')
