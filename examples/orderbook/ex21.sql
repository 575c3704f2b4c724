-- RPAI Example 2.1 (§2.1), as printed: the sum of a * b over the tuples whose group (same a) holds
-- exactly half of the total b. Both nested aggregates compare by equality: a PAI map.
-- r has a surrogate key id (see schema.sql); the query does not read it.
select sum(r.a * r.b) as result
from r
where 0.5 * (select sum(r1.b) from r r1)
    = (select sum(r2.b) from r r2 where r2.a = r.a)
