-- Per city: drivers, electric vehicles among their cars, and average rating.
SELECT c.name, c.country,
       COUNT(d.driver_id) AS drivers,
       COUNT(CASE WHEN v.is_electric THEN 1 END) AS electric_cars,
       ROUND(AVG(d.rating), 2) AS avg_rating
FROM cities c
LEFT JOIN drivers d ON d.city_id = c.city_id
LEFT JOIN vehicles v ON v.vehicle_id = d.vehicle_id
GROUP BY c.name, c.country
