-- Capacity: parcels whose latest scan puts them on site (received or sorted) against each warehouse's capacity.
WITH latest AS (
    SELECT parcel_id, warehouse_id, scan_type,
           ROW_NUMBER() OVER (PARTITION BY parcel_id ORDER BY scanned_at DESC, scan_type) AS rn
    FROM scans
)
SELECT w.warehouse_id, w.code, w.capacity, COUNT(l.parcel_id) AS parcels_on_site,
       ROUND(COUNT(l.parcel_id) * 100.0 / NULLIF(w.capacity, 0), 2) AS load_pct
FROM warehouses w
LEFT JOIN latest l
  ON l.warehouse_id = w.warehouse_id AND l.rn = 1 AND l.scan_type IN ('received', 'sorted')
GROUP BY w.warehouse_id, w.code, w.capacity
