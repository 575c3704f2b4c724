-- Every house with every shop of its postcode (no aggregate): the join's rows themselves. The join is
-- q-hierarchical for its output (postcode is in both atoms and selected), so a view tree keeps it
-- factorized (Olteanu Ex. 4.4): O(1) work per single-tuple update, and the result, up to
-- |house| x |shop| per postcode, is enumerated from the views with constant delay, never stored.
select h.postcode, h.house_id, h.price, s.shop_id, s.pricerange
from house h
join shop s on h.postcode = s.postcode
