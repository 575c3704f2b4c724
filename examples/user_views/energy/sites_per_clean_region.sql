-- Sites per region, region names cleaned up.
SELECT initcap(trim(region)) AS region, site_type, COUNT(*) AS sites
FROM sites
GROUP BY initcap(trim(region)), site_type
