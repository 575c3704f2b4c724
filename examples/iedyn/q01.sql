-- IEDyn Table 1, Q1: R(a,b,c) ⋈ S(d,e,f) | a < d. A full join (no projection): a cross product
-- filtered by one inequality.
select r.a, r.b, r.c, s.d, s.e, s.f
from r, s
where r.a < s.d
