-- Sites and floor area per postcode area (the leading letters).
SELECT upper(regexp_extract(postcode, '^([A-Za-z]+)', 1)) AS area,
       COUNT(*) AS sites,
       ROUND(SUM(floor_area_m2), 1) AS floor_area
FROM sites
GROUP BY upper(regexp_extract(postcode, '^([A-Za-z]+)', 1))
