-- Data quality: shipments marked delivered none of whose parcels has a delivered scan.
SELECT shipment_id FROM shipments WHERE status = 'delivered'
EXCEPT
SELECT p.shipment_id
FROM parcels p
JOIN scans sc ON sc.parcel_id = p.parcel_id
WHERE sc.scan_type = 'delivered'
