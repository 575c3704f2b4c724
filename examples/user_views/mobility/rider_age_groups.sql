-- Riders and trips by age group (unknown birth year shown as such).
SELECT CASE WHEN r.birth_year IS NULL THEN 'unknown'
            WHEN 2024 - r.birth_year < 25 THEN '18-24'
            WHEN 2024 - r.birth_year < 40 THEN '25-39'
            WHEN 2024 - r.birth_year < 60 THEN '40-59'
            ELSE '60+' END AS age_group,
       COUNT(DISTINCT r.rider_id) AS riders,
       COUNT(t.trip_id) AS trips
FROM riders r
LEFT JOIN trips t ON t.rider_id = r.rider_id
GROUP BY 1
