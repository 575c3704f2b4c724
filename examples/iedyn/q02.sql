-- IEDyn Table 1, Q2: R(a,b,c,k) ⋈ S(d,e,f,k) | a < d. A full join: the shared variable k is an
-- equality, a < d an inequality beside it.
select r.a, r.b, r.c, r.k, s.d, s.e, s.f
from r, s
where r.k = s.k and r.a < s.d
