-- IEDyn Table 1, Q4: R(a,b,c) ⋈ S(d,e,f) ⋈ T(g,h,i) | a < d ∧ d < g. A full join: a chain of
-- inequalities through s.d.
select r.a, r.b, r.c, s.d, s.e, s.f, t.g, t.h, t.i
from r, s, t
where r.a < s.d and s.d < t.g
