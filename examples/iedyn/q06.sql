-- IEDyn Table 1, Q6: R(a,b,c) ⋈ S(d,e,f,k) ⋈ T(g,h,i,k) | a < d ∧ d < g. Q4 with the equality
-- s.k = t.k.
select r.a, r.b, r.c, s.d, s.e, s.f, s.k, t.g, t.h, t.i
from r, s, t
where s.k = t.k and r.a < s.d and s.d < t.g
