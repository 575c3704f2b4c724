-- Months since each city launched, as of the end of June 2024.
SELECT name, launched_on,
       CAST(months_between(DATE '2024-06-30', launched_on) AS INT) AS months_live,
       base_fare
FROM cities
