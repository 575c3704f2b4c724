-- Directory: warehouses with a label, normalised country and age in days.
SELECT warehouse_id,
       concat(code, ' - ', initcap(trim(city))) AS label,
       upper(country) AS country,
       COALESCE(kind, 'unknown') AS kind,
       datediff(DATE '2024-06-30', opened_on) AS age_days
FROM warehouses
