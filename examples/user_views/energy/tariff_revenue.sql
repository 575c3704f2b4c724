-- Billed revenue and energy per tariff, green tariffs flagged.
SELECT t.name, t.is_green, COUNT(DISTINCT b.site_id) AS sites, SUM(b.amount) AS revenue, SUM(b.kwh_billed) AS kwh
FROM bills b
JOIN sites s ON s.site_id = b.site_id
JOIN tariffs t ON t.tariff_id = s.tariff_id
WHERE b.status <> 'cancelled'
GROUP BY t.name, t.is_green
