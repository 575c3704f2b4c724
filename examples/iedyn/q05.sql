-- IEDyn Table 1, Q5: R(a,b,c,k) ⋈ S(d,e,f,k) ⋈ T(g,h,i) | a < d ∧ d < g. Q4 with the equality
-- r.k = s.k.
select r.a, r.b, r.c, r.k, s.d, s.e, s.f, t.g, t.h, t.i
from r, s, t
where r.k = s.k and r.a < s.d and s.d < t.g
