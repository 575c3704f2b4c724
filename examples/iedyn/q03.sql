-- IEDyn Table 1, Q3: R(a,b,c) ⋈ S(d,e,f) ⋈ T(g,h,i) | a < d ∧ e < g. A full join: inequalities on
-- two different attributes of s.
select r.a, r.b, r.c, s.d, s.e, s.f, t.g, t.h, t.i
from r, s, t
where r.a < s.d and s.e < t.g
