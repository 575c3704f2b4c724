-- Sites per tariff price band.
SELECT CASE WHEN t.price_per_kwh < 0.25 THEN 'low'
            WHEN t.price_per_kwh < 0.29 THEN 'mid'
            ELSE 'high' END AS band,
       COUNT(s.site_id) AS sites
FROM tariffs t
LEFT JOIN sites s ON s.tariff_id = t.tariff_id
GROUP BY CASE WHEN t.price_per_kwh < 0.25 THEN 'low'
              WHEN t.price_per_kwh < 0.29 THEN 'mid'
              ELSE 'high' END
