-- Closing: shipments with parcels, every one of which has a delivered scan.
SELECT s.shipment_id, s.customer_ref
FROM shipments s
WHERE EXISTS (SELECT 1 FROM parcels p WHERE p.shipment_id = s.shipment_id)
  AND NOT EXISTS (
      SELECT 1
      FROM parcels p
      WHERE p.shipment_id = s.shipment_id
        AND NOT EXISTS (
            SELECT 1 FROM scans sc WHERE sc.parcel_id = p.parcel_id AND sc.scan_type = 'delivered'
        )
  )
